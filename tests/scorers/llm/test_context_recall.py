"""Context recall against scripted judge replies."""

from __future__ import annotations

from typing import Any

import pytest
from item_counts import asks_again_for, item_bounds

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


async def test_claims_and_verdicts_are_asked_again_when_too_few(judge_server: FakeJudgeServer) -> None:
    scorer = create_context_recall_scorer(judge_server.judge(), context=["doc"])
    judge_server.push(claims(0), claims(2), verdicts("yes"), verdicts("yes", "no"), "r")
    result = await scorer.run(input="q", output="a", ground_truth="Paris. Big.")
    assert result.score == 0.5 and [c.attempts for c in result.judge_calls] == [2, 2, 1]
    extract, extract_again, judge, judge_again = judge_server.requests[:4]
    assert item_bounds(extract, "claims") == (1, 6)  # the reference answer is never empty
    assert asks_again_for(extract_again, "claims", 1)
    assert item_bounds(judge, "verdicts") == (2, 2) and asks_again_for(judge_again, "verdicts", 2)


async def test_errors_and_retry(judge_server: FakeJudgeServer) -> None:
    scorer = create_context_recall_scorer(judge_server.judge(), context=["doc"])
    with pytest.raises(ScorerError, match=r"needs run\.ground_truth"):
        await scorer.run(input="q", output="a")
    judge_server.push(*[claims(0)] * 4)
    with pytest.raises(ScorerError, match=r"after 4 attempt.*at claims: List should have at least 1"):
        await scorer.run(input="q", output="a", ground_truth="?")
    judge_server.push(claims(1), Reply.malformed(), verdicts("yes"), "r")
    assert (await scorer.run(input="q", output="a", ground_truth="t")).score == 1.0
