"""Rubric and multi-turn judge against scripted judge replies."""

from __future__ import annotations

from typing import Any

import pytest
from item_counts import asks_again_for, item_bounds

from agentevals import Run, ScorerError
from agentevals.scorers.llm import RubricCriterion, create_multi_turn_judge_scorer, create_rubric_scorer
from agentevals.scorers.utils import create_agent_test_run, create_test_message
from agentevals.testing import FakeJudgeServer, Reply


def checks(*satisfied: bool) -> dict[str, Any]:
    return {
        "criteria": [
            {"criterion": f"c{i}", "satisfied": s, "reasoning": "r"} for i, s in enumerate(satisfied)
        ],
        "overall_assessment": "overall",
    }


@pytest.mark.parametrize(
    ("satisfied", "expected"), [((True, True), 1.0), ((False, False), 0.0), ((True, False), 0.0)]
)
async def test_rubric_formula(
    judge_server: FakeJudgeServer, satisfied: tuple[bool, ...], expected: float
) -> None:
    judge_server.push(checks(*satisfied))
    scorer = create_rubric_scorer(judge_server.judge(), criteria="- Greets the user\n2) Cites a source")
    result = await scorer.run(input="q", output="Hello! Source: X.")
    assert result.score == expected
    assert result.reason is not None and result.reason.startswith(f"The score is {expected}")


async def test_rubric_optional_criteria_fields_and_scale(judge_server: FakeJudgeServer) -> None:
    judge_server.push(checks(True, False))
    criteria = [RubricCriterion("Answers the question"), {"description": "Uses emoji", "required": False}]
    result = await create_rubric_scorer(judge_server.judge(), criteria=criteria, scale=5).run(
        input="What is 2+2?", output="4"
    )
    assert result.raw_score == 5.0
    assert result.analyze_step_result.criteria[1].satisfied is False
    prompt = result.analyze_prompt or ""
    assert "1. Answers the question" in prompt and "2. Uses emoji" in prompt and "What is 2+2?" in prompt
    assert result.reason == "The score is 5.0 because every required rubric criterion is satisfied."
    judge_server.push(checks(True, False))
    failed = await create_rubric_scorer(judge_server.judge(), criteria=["A", "B"]).run(input="q", output="a")
    assert failed.reason == "The score is 0.0 because these required criteria are not met: B."


async def test_rubric_dynamic_none_and_errors(judge_server: FakeJudgeServer) -> None:
    scorer = create_rubric_scorer(judge_server.judge())
    passed = await scorer.run(input="q", output="a")
    assert passed.score == 1.0 and passed.analyze_prompt is None and judge_server.requests == []
    judge_server.push(Reply.malformed(), checks(True))
    dynamic = await scorer.run(Run(input="q", output="a", request_context={"rubric": "* Is short"}))
    assert dynamic.score == 1.0 and "1. Is short" in (dynamic.analyze_prompt or "")
    assert dynamic.judge_calls[0].attempts == 2
    judge_server.push(checks(False))
    from_input = await scorer.run(input={"question": "q", "rubric": ["Is polite"]}, output="a")
    assert from_input.score == 0.0 and "1. Is polite" in (from_input.analyze_prompt or "")
    judge_server.push(checks(True), checks(True, False))
    two = await create_rubric_scorer(judge_server.judge(), criteria="a\nb").run(input="q", output="a")
    assert two.score == 0.0 and two.judge_calls[0].attempts == 2
    assert item_bounds(judge_server.requests[-2], "criteria") == (2, 2)
    assert asks_again_for(judge_server.requests[-1], "criteria", 2)
    with pytest.raises(ValueError, match="needs a description"):
        create_rubric_scorer("openai/gpt-4o-mini", criteria=[{"required": True}])


def conversation() -> Run:
    return create_agent_test_run(
        remembered_messages=[
            {"role": "user", "content": "My order is late."},
            {"role": "assistant", "content": "Sorry!"},
        ],
        input_messages=["Can you refund it?"],
        output=[create_test_message("Refund issued.", role="assistant")],
    )


@pytest.mark.parametrize(("satisfied", "expected"), [(True, 1.0), (False, 0.0)])
async def test_multi_turn_formula_and_fields(
    judge_server: FakeJudgeServer, satisfied: bool, expected: float
) -> None:
    judge_server.push({"satisfied": satisfied, "reasoning": "Polite throughout."})
    scorer = create_multi_turn_judge_scorer(
        judge_server.judge(), criterion="Stays polite and resolves the issue"
    )
    result = await scorer.run(conversation())
    assert result.score == expected
    assert result.analyze_step_result.satisfied is satisfied
    prompt = result.analyze_prompt or ""
    assert (
        "user: My order is late.\nassistant: Sorry!\nuser: Can you refund it?\nassistant: Refund issued."
        in prompt
    )
    assert (
        "Stays polite" in prompt
        and result.reason is not None
        and result.reason.endswith("Polite throughout.")
    )


async def test_multi_turn_scale_errors_and_retry(judge_server: FakeJudgeServer) -> None:
    judge_server.push(Reply.malformed(), {"satisfied": True, "reasoning": "ok"})
    result = await create_multi_turn_judge_scorer(judge_server.judge(), {"criterion": "c", "scale": 3}).run(
        conversation()
    )
    assert result.raw_score == 3.0 and result.judge_calls[0].attempts == 2
    with pytest.raises(ValueError, match="needs a criterion"):
        create_multi_turn_judge_scorer("openai/gpt-4o-mini")
    with pytest.raises(ScorerError, match="at least one assistant turn"):
        await create_multi_turn_judge_scorer(judge_server.judge(), criterion="c").run(input="q", output="")
