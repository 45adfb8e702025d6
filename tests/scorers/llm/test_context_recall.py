"""Context recall against scripted judge replies."""

from __future__ import annotations

from typing import Any

import pytest

from agentevals import Run, ScorerError
from agentevals.scorers.llm import create_context_recall_scorer
from agentevals.testing import FakeJudgeServer, Reply


def claims(n: int) -> dict[str, Any]:
    return {"claims": [f"c{i}" for i in range(n)]}


def verdicts(*labels: str) -> dict[str, Any]:
    return {"verdicts": [{"claim": f"c{i}", "verdict": v, "reason": "r"} for i, v in enumerate(labels)]}


@pytest.mark.parametrize(
    ("labels", "expected"), [(["yes", "yes"], 1.0), (["no", "no"], 0.0), (["yes", "no", "yes"], 0.67)]
)
async def test_formula(judge_server: FakeJudgeServer, labels: list[str], expected: float) -> None:
    judge_server.push(claims(len(labels)), verdicts(*labels), "reason")
    result = await create_context_recall_scorer(judge_server.judge(), context=["doc"]).run(
        input="q", output="a", ground_truth="truth"
    )
    assert result.score == expected and result.reason == "reason"


async def test_fields_and_scale(judge_server: FakeJudgeServer) -> None:
    judge_server.push(claims(2), verdicts("yes", "no"), "Half of the reference is in the context.")
    result = await create_context_recall_scorer(judge_server.judge(), scale=2).run(
        Run(
            input="Q?",
            output="A.",
            ground_truth="Paris is the capital. It has 2M people.",
            context=["Paris doc"],
        )
    )
    assert result.raw_score == 1.0
    assert result.preprocess_step_result.claims == ["c0", "c1"]
    assert "It has 2M people." in result.preprocess_prompt  # type: ignore[operator]
    assert "1. Paris doc" in result.analyze_prompt and "2. c1" in result.analyze_prompt  # type: ignore[operator]
    assert "[no] c1" in result.generate_reason_prompt  # type: ignore[operator]


async def test_empty_claims_errors_and_retry(judge_server: FakeJudgeServer) -> None:
    scorer = create_context_recall_scorer(judge_server.judge(), context=["doc"])
    judge_server.push(claims(0))
    with pytest.raises(ScorerError, match="extracted no claims from a non-empty reference answer"):
        await scorer.run(input="q", output="a", ground_truth="?")
    with pytest.raises(ScorerError, match=r"needs run\.ground_truth"):
        await scorer.run(input="q", output="a")
    judge_server.push(claims(2), verdicts("yes"))
    with pytest.raises(ScorerError, match="1 verdicts for 2 claims"):
        await scorer.run(input="q", output="a", ground_truth="t")
    judge_server.push(claims(1), Reply.malformed(), verdicts("yes"), "r")
    assert (await scorer.run(input="q", output="a", ground_truth="t")).score == 1.0
