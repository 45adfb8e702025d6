"""Faithfulness against scripted judge replies."""

from __future__ import annotations

from typing import Any

import pytest
from item_counts import asks_again_for, item_bounds

from agentevals import Run, ScorerError
from agentevals.scorers.llm import create_faithfulness_scorer
from agentevals.scorers.utils import create_agent_test_run, create_test_message, create_tool_invocation
from agentevals.testing import FakeJudgeServer, Reply

CONTEXT = ["The Tesla Model 3 is an electric sedan.", "It was launched in 2017."]


def claims(n: int) -> dict[str, Any]:
    return {"claims": [f"c{i}" for i in range(n)]}


def verdicts(*labels: str) -> dict[str, Any]:
    return {"verdicts": [{"claim": f"c{i}", "verdict": v, "reason": "r"} for i, v in enumerate(labels)]}


@pytest.mark.parametrize(
    ("labels", "expected"),
    [(["yes", "yes"], 1.0), (["no", "no"], 0.0), (["yes", "no", "unsure"], 0.33), (["unsure", "yes"], 0.5)],
)
async def test_formula(judge_server: FakeJudgeServer, labels: list[str], expected: float) -> None:
    judge_server.push(claims(len(labels)), verdicts(*labels), "reason")
    result = await create_faithfulness_scorer(judge_server.judge(), context=CONTEXT).run(
        input="q", output="a"
    )
    assert result.score == expected and result.reason == "reason"


async def test_fields_and_prompts(judge_server: FakeJudgeServer) -> None:
    judge_server.push(
        claims(2), verdicts("yes", "unsure"), "The score is 0.5 because one claim is unverified."
    )
    scorer = create_faithfulness_scorer(judge_server.judge(), {"context": CONTEXT, "scale": 4})
    result = await scorer.run(input="Tell me about the Tesla Model 3.", output="It is electric. It is red.")
    assert result.raw_score == 2.0
    assert result.preprocess_step_result.claims == ["c0", "c1"]
    assert [v.verdict for v in result.analyze_step_result.verdicts] == ["yes", "unsure"]
    assert "It is electric. It is red." in result.preprocess_prompt
    assert "1. The Tesla Model 3 is an electric sedan." in result.analyze_prompt
    assert "1. c0" in result.analyze_prompt
    assert "[unsure] c1" in result.generate_reason_prompt  # type: ignore[operator]
    assert judge_server.requests[0].system.startswith("You verify claims")


async def test_no_claims_scores_zero_without_context(judge_server: FakeJudgeServer) -> None:
    judge_server.push(claims(0), verdicts())
    result = await create_faithfulness_scorer(judge_server.judge()).run(input="q", output="")
    assert result.score == 0.0 and "no claims" in (result.reason or "")
    assert len(judge_server.requests) == 2


async def test_context_from_run_then_tool_results(judge_server: FakeJudgeServer) -> None:
    scorer = create_faithfulness_scorer(judge_server.judge())
    judge_server.push(claims(1), verdicts("yes"), "r")
    result = await scorer.run(Run(input="q", output="a", context=["Retrieved doc."]))
    assert "1. Retrieved doc." in result.analyze_prompt  # type: ignore[operator]
    run = create_agent_test_run(
        input_messages=["Weather?"],
        output=[
            create_test_message(
                "Sunny.",
                role="assistant",
                tool_invocations=[create_tool_invocation(tool_name="weather", result={"sky": "sunny"})],
            )
        ],
    )
    judge_server.push(claims(1), verdicts("yes"), "r")
    result = await scorer.run(run)
    assert '{"tool": "weather", "result": {"sky": "sunny"}}' in result.analyze_prompt  # type: ignore[operator]


async def test_extractor_wins_and_missing_context_errors(judge_server: FakeJudgeServer) -> None:
    scorer = create_faithfulness_scorer(
        judge_server.judge(), context=["static"], get_context=lambda run: [f"from {run.input_text}"]
    )
    judge_server.push(claims(1), verdicts("no"), "r")
    result = await scorer.run(input="extractor", output="a")
    assert "from extractor" in result.analyze_prompt and "static" not in result.analyze_prompt  # type: ignore[operator]
    judge_server.push(claims(1))
    with pytest.raises(ScorerError, match="faithfulness has no context"):
        await create_faithfulness_scorer(judge_server.judge()).run(input="q", output="a")


async def test_malformed_and_short_replies_are_asked_again(judge_server: FakeJudgeServer) -> None:
    judge_server.push(claims(2), Reply.malformed(), verdicts("yes", "yes"), "r")
    result = await create_faithfulness_scorer(judge_server.judge(), context=CONTEXT).run(
        input="q", output="a"
    )
    assert result.score == 1.0 and result.judge_calls[1].attempts == 2
    judge_server.push(claims(0), claims(2), verdicts("yes"), verdicts("yes", "no"), "r")
    result = await create_faithfulness_scorer(judge_server.judge(), context=CONTEXT).run(
        input="q", output="a"
    )
    assert result.score == 0.5 and [c.attempts for c in result.judge_calls] == [2, 2, 1]
    extract, extract_again, judge, judge_again = judge_server.requests[-5:-1]
    assert item_bounds(extract, "claims") == (1, 1) and asks_again_for(extract_again, "claims", 1)
    assert item_bounds(judge, "verdicts") == (2, 2) and asks_again_for(judge_again, "verdicts", 2)


def test_invalid_options() -> None:
    with pytest.raises(ValueError, match="context cannot be empty"):
        create_faithfulness_scorer("openai/gpt-4o-mini", context=[])
    with pytest.raises(ValueError, match="list of strings"):
        create_faithfulness_scorer("openai/gpt-4o-mini", context="one string")


@pytest.mark.parametrize(
    "question", ["Tell me about the Tesla Model 3.", "What are the key features of this electric vehicle?"]
)
async def test_seed_example(judge_server: FakeJudgeServer, question: str) -> None:
    """Twin of the seed: no context option; the context comes from the agent's tool call."""
    run = create_agent_test_run(
        input_messages=[question],
        output=[
            create_test_message(
                "The Model 3 is an electric sedan launched in 2017 with a 500 km range.",
                role="assistant",
                tool_invocations=[create_tool_invocation(tool_name="car-specs", result=CONTEXT)],
            )
        ],
    )
    judge_server.push(
        {"claims": ["The Model 3 is an electric sedan.", "It launched in 2017.", "It has a 500 km range."]},
        {
            "verdicts": [
                {"claim": "The Model 3 is an electric sedan.", "verdict": "yes", "reason": "stated"},
                {"claim": "It launched in 2017.", "verdict": "yes", "reason": "stated"},
                {"claim": "It has a 500 km range.", "verdict": "unsure", "reason": "not in context"},
            ]
        },
        "The score is 0.67 because the range is not in the context.",
    )
    result = await create_faithfulness_scorer(judge_server.judge()).run(run)
    assert result.score == 0.67
    assert result.reason == "The score is 0.67 because the range is not in the context."


async def test_extra_verdicts_are_ignored(judge_server: FakeJudgeServer) -> None:
    judge_server.push(claims(2), verdicts("yes", "no", "no", "no"), "r")
    result = await create_faithfulness_scorer(judge_server.judge(), context=CONTEXT).run(
        input="q", output="a"
    )
    assert result.score == 0.5
