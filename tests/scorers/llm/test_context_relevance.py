"""Context relevance against scripted judge replies."""

from __future__ import annotations

from typing import Any

import pytest
from item_counts import asks_again_for, item_bounds

from agentevals import ScorerError
from agentevals.scorers.llm import create_context_relevance_scorer
from agentevals.scorers.utils import create_agent_test_run, create_test_message, create_tool_invocation
from agentevals.testing import FakeJudgeServer, Reply


def analysis(*levels: tuple[str, bool], missing: int = 0) -> dict[str, Any]:
    return {
        "evaluations": [
            {
                "context_index": i,
                "context_piece": f"p{i}",
                "relevance_level": lv,
                "was_used": used,
                "reasoning": "r",
            }
            for i, (lv, used) in enumerate(levels)
        ],
        "missing_context": [f"m{i}" for i in range(missing)],
        "overall_assessment": "overall",
    }


@pytest.mark.parametrize(
    ("levels", "missing", "expected"),
    [
        ([("high", True), ("high", True)], 0, 1.0),
        ([("none", False), ("none", False)], 0, 0.0),
        ([("high", True), ("medium", True), ("low", False)], 0, 0.67),  # (1 + 0.7 + 0.3) / 3
        ([("high", False), ("high", True)], 0, 0.9),  # one unused high piece
        ([("high", True)], 2, 0.7),  # two missing items × 0.15
        ([("high", True)], 5, 0.5),  # missing penalty capped at 0.5
        ([("low", False)], 4, 0.0),  # floored at 0
    ],
)
async def test_formula(
    judge_server: FakeJudgeServer, levels: list[tuple[str, bool]], missing: int, expected: float
) -> None:
    judge_server.push(analysis(*levels, missing=missing), "reason")
    scorer = create_context_relevance_scorer(
        judge_server.judge(), context=[f"d{i}" for i in range(len(levels))]
    )
    result = await scorer.run(input="q", output="a")
    assert result.score == expected and result.reason == "reason"


async def test_fields_penalty_options_and_scale(judge_server: FakeJudgeServer) -> None:
    judge_server.push(analysis(("high", False), missing=1), "Unused key piece.")
    scorer = create_context_relevance_scorer(
        judge_server.judge(),
        {"context": ["Doc A"], "unused_high_relevance_context": 0.2, "missing_context_per_item": 0.3},
        scale=10,
    )
    result = await scorer.run(input="Question?", output="Answer.")
    assert result.raw_score == 5.0
    assert result.analyze_step_result.missing_context == ["m0"]
    assert "[1] Doc A" in result.analyze_prompt and "Answer." in result.analyze_prompt  # type: ignore[operator]
    assert "1. m0" in result.generate_reason_prompt and "unused" in result.generate_reason_prompt  # type: ignore[operator]
    assert scorer.name == "Context Relevance (LLM)"


async def test_tool_results_as_context_and_errors(judge_server: FakeJudgeServer) -> None:
    run = create_agent_test_run(
        input_messages=["Weather?"],
        output=[
            create_test_message(
                "Sunny.",
                role="assistant",
                tool_invocations=[create_tool_invocation(tool_name="w", result="sunny")],
            )
        ],
    )
    judge_server.push(Reply.malformed(), analysis(("high", True)), "r")
    result = await create_context_relevance_scorer(judge_server.judge()).run(run)
    assert result.score == 1.0 and '"result": "sunny"' in result.analyze_prompt  # type: ignore[operator]
    assert result.judge_calls[0].attempts == 2
    with pytest.raises(ScorerError, match="No context available for context relevance"):
        await create_context_relevance_scorer(judge_server.judge()).run(input="q", output="a")
    judge_server.push(analysis(), analysis(("low", False)), "r")  # no evaluation, then one per piece
    result = await create_context_relevance_scorer(judge_server.judge(), context=["d"]).run(
        input="q", output="a"
    )
    assert result.score == 0.3 and result.judge_calls[0].attempts == 2
    asked, retry = judge_server.requests[-3:-1]
    assert item_bounds(asked, "evaluations") == (1, 1) and item_bounds(asked, "missing_context") == (None, 10)
    assert asks_again_for(retry, "evaluations", 1)
    with pytest.raises(ValueError, match="max_missing_context_penalty must be"):
        create_context_relevance_scorer("openai/gpt-4o-mini", max_missing_context_penalty=3)
    with pytest.raises(ValueError, match="get_context must be callable"):
        create_context_relevance_scorer("openai/gpt-4o-mini", get_context="docs")


async def test_nested_penalties_option(judge_server: FakeJudgeServer) -> None:
    judge_server.push(analysis(("high", False)), "r")
    scorer = create_context_relevance_scorer(
        judge_server.judge(), context=["d"], penalties={"unusedHighRelevanceContext": 0.4}
    )
    assert (await scorer.run(input="q", output="a")).score == 0.6
    with pytest.raises(ValueError, match="unknown penalty 'bogus'"):
        create_context_relevance_scorer("openai/gpt-4o-mini", penalties={"bogus": 0.1})
