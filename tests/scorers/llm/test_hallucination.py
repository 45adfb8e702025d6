"""Hallucination against scripted judge replies, with static and dynamic context."""

from __future__ import annotations

import json
from typing import Any

import pytest
from item_counts import item_bounds

from agentevals import Run, ScorerError
from agentevals.scorers.llm import create_hallucination_scorer
from agentevals.scorers.utils import (
    create_agent_test_run,
    create_test_message,
    create_tool_invocation,
    extract_tool_results,
)
from agentevals.testing import FakeJudgeServer, Reply

IPHONE = [
    "The first iPhone was announced on January 9, 2007.",
    "It was released on June 29, 2007.",
    "Steve Jobs introduced it at Macworld.",
]


def claims(n: int) -> dict[str, Any]:
    return {"claims": [f"c{i}" for i in range(n)]}


def verdicts(*labels: str) -> dict[str, Any]:
    return {"verdicts": [{"statement": f"c{i}", "verdict": v, "reason": "r"} for i, v in enumerate(labels)]}


@pytest.mark.parametrize(
    ("labels", "expected"), [(["yes", "yes"], 1.0), (["no", "no", "no"], 0.0), (["yes", "no", "no"], 0.33)]
)
async def test_formula(judge_server: FakeJudgeServer, labels: list[str], expected: float) -> None:
    judge_server.push(claims(len(labels)), verdicts(*labels), "reason")
    result = await create_hallucination_scorer(judge_server.judge(), context=IPHONE).run(
        input="q", output="a"
    )
    assert result.score == expected and result.reason == "reason"


async def test_seed_static_context(judge_server: FakeJudgeServer) -> None:
    scorer = create_hallucination_scorer(judge_server.judge(), options={"context": IPHONE})
    judge_server.push(
        {"claims": ["The iPhone was announced in 2007.", "It was announced at CES."]},
        {
            "verdicts": [
                {"statement": "The iPhone was announced in 2007.", "verdict": "no", "reason": "supported"},
                {
                    "statement": "It was announced at CES.",
                    "verdict": "yes",
                    "reason": "context says Macworld",
                },
            ]
        },
        "The score is 0.5 because the venue contradicts the context.",
    )
    result = await scorer.run(
        input="When was the first iPhone released?", output="It was announced in 2007 at CES."
    )
    assert result.score == 0.5
    assert result.preprocess_step_result.claims[1] == "It was announced at CES."
    assert [v.verdict for v in result.analyze_step_result.verdicts] == ["no", "yes"]
    assert "3. Steve Jobs introduced it at Macworld." in result.analyze_prompt  # type: ignore[operator]
    assert "Macworld" in result.generate_reason_prompt  # type: ignore[operator]
    assert result.reason == "The score is 0.5 because the venue contradicts the context."


async def test_seed_dynamic_context_from_tool_results_wins(judge_server: FakeJudgeServer) -> None:
    calls: list[tuple[str, float | None]] = []

    def get_context(run: Run, step: str, score: float | None, results: object) -> list[str]:
        calls.append((step, score))
        return [
            json.dumps({"tool": t.tool_name, "result": t.result}) for t in extract_tool_results(run.output)
        ]

    scorer = create_hallucination_scorer(judge_server.judge(), context=["static"], get_context=get_context)
    run = create_agent_test_run(
        input_messages=["Stock price?"],
        output=[
            create_test_message(
                "ACME trades at 12 USD.",
                role="assistant",
                tool_invocations=[create_tool_invocation(tool_name="quote", result={"ACME": 12})],
            )
        ],
    )
    judge_server.push(claims(1), verdicts("no"), "No hallucination.")
    result = await scorer.run(run)
    assert result.score == 0.0
    assert '{"tool": "quote", "result": {"ACME": 12}}' in result.analyze_prompt  # type: ignore[operator]
    assert "static" not in result.analyze_prompt  # type: ignore[operator]
    assert calls == [("analyze", None), ("generate_reason", 0.0)]


async def test_async_get_context_and_run_context_fallback(judge_server: FakeJudgeServer) -> None:
    async def get_context(run: Run) -> list[str]:
        return ["async doc"]

    judge_server.push(claims(1), verdicts("yes"), "r")
    result = await create_hallucination_scorer(judge_server.judge(), get_context=get_context).run(
        input="q", output="a"
    )
    assert "async doc" in result.analyze_prompt  # type: ignore[operator]
    judge_server.push(claims(1), verdicts("yes"), "r")
    result = await create_hallucination_scorer(judge_server.judge()).run(
        Run(input="q", output="a", context=["captured doc"])
    )
    assert "captured doc" in result.analyze_prompt and result.score == 1.0  # type: ignore[operator]


async def test_empty_output_scores_zero(judge_server: FakeJudgeServer) -> None:
    judge_server.push(claims(0), verdicts())
    result = await create_hallucination_scorer(judge_server.judge(), context=IPHONE).run(input="q", output="")
    assert result.score == 0.0 and "nothing is hallucinated" in (result.reason or "")
    assert result.generate_reason_prompt is None


async def test_errors_and_retry(judge_server: FakeJudgeServer) -> None:
    judge_server.push(claims(1))
    with pytest.raises(ScorerError, match="hallucination has no context"):
        await create_hallucination_scorer(judge_server.judge()).run(input="q", output="a")
    judge_server.push(claims(2), *[verdicts("yes")] * 4)
    with pytest.raises(ScorerError, match=r"after 4 attempt.*at verdicts: List should have at least 2"):
        await create_hallucination_scorer(judge_server.judge(), context=IPHONE).run(input="q", output="a")
    assert item_bounds(judge_server.requests[2], "verdicts") == (2, 2)
    judge_server.push(claims(1), verdicts("unsure"), verdicts("yes"), Reply.text("r"))
    result = await create_hallucination_scorer(judge_server.judge(), context=IPHONE, scale=10).run(
        input="q", output="a"
    )
    assert result.raw_score == 10.0 and result.judge_calls[1].attempts == 2


@pytest.mark.parametrize(
    "question", ["When was the first iPhone released?", "Tell me about the original iPhone announcement."]
)
async def test_seed_batch_example(judge_server: FakeJudgeServer, question: str) -> None:
    """Twin of the seed's runEvals example with static context ['Known fact 1', 'Known fact 2']."""
    scorer = create_hallucination_scorer(
        judge_server.judge(), options={"context": ["Known fact 1", "Known fact 2"]}
    )
    judge_server.push(
        claims(2), verdicts("no", "no"), "The score is 0 because every claim matches the context."
    )
    result = await scorer.run(input=question, output="Two supported claims.")
    assert result.score == 0.0
    assert result.reason == "The score is 0 because every claim matches the context."
    assert "1. Known fact 1\n2. Known fact 2" in (result.analyze_prompt or "")


async def test_extra_verdicts_are_ignored(judge_server: FakeJudgeServer) -> None:
    # more verdicts than claims: the first two count, the third is ignored (as Mastra does)
    judge_server.push(claims(2), verdicts("yes", "no", "yes"), "r")
    result = await create_hallucination_scorer(judge_server.judge(), context=IPHONE).run(
        input="q", output="a"
    )
    assert result.score == 0.5
