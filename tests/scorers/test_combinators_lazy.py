"""Lazy combinators: code members first, judged members skipped once the result is decided."""

from __future__ import annotations

import pytest

from agentevals import Scorer, create_scorer
from agentevals.errors import ScorerSkipped
from agentevals.scorers import all_of, any_of, create_exact_match_scorer, weighted
from agentevals.steps import SkipRun
from agentevals.testing import FakeJudgeServer


def code(id: str, score: float) -> Scorer:
    return create_scorer(id=id).generate_score(lambda **_: score)


def judged(server: FakeJudgeServer, id: str = "llm") -> Scorer:
    return create_scorer(id=id, judge=server.judge()).generate_score(
        {"description": "Judge the answer", "create_prompt": lambda run: f"Grade: {run.output_text}"}
    )


def needs_ground_truth(id: str = "needs_gt") -> Scorer:
    def score(run: object, **_: object) -> float:
        raise SkipRun("the run has no ground truth", reason="no_ground_truth")

    return create_scorer(id=id).generate_score(score)


async def test_all_of_skips_the_judge_after_a_code_zero(judge_server: FakeJudgeServer) -> None:
    result = await all_of(code("gate", 0.0), judged(judge_server)).run(output="x")
    assert judge_server.requests == []  # no judge call was made
    assert result.score == 0.0 and result.judge_calls == []
    assert [m["scorer_id"] for m in result.analyze_step_result["members"]] == ["gate"]
    assert result.analyze_step_result["skipped"] == [
        {"scorer_id": "llm", "skip_reason": "decided", "reason": "all_of was decided by 'gate' scoring 0"}
    ]


async def test_any_of_skips_the_judge_after_a_code_one(judge_server: FakeJudgeServer) -> None:
    result = await any_of(judged(judge_server), code("exact", 1.0)).run(output="x")
    assert judge_server.requests == []
    assert result.score == 1.0
    assert [s["scorer_id"] for s in result.analyze_step_result["skipped"]] == ["llm"]


@pytest.mark.parametrize("combine", [all_of, any_of])
async def test_lazy_false_runs_every_member(judge_server: FakeJudgeServer, combine: object) -> None:
    judge_server.push({"score": 0.5})
    decisive = 0.0 if combine is all_of else 1.0
    result = await combine(code("gate", decisive), judged(judge_server), lazy=False).run(output="x")  # type: ignore[operator]
    assert len(judge_server.requests) == 1
    assert [m["scorer_id"] for m in result.analyze_step_result["members"]] == ["gate", "llm"]
    assert result.analyze_step_result["skipped"] == []
    assert result.score == decisive
    assert [c.step for c in result.judge_calls] == ["generate_score"]


async def test_undecided_runs_the_judge(judge_server: FakeJudgeServer) -> None:
    judge_server.push({"score": 0.25})
    result = await all_of(judged(judge_server), code("gate", 1.0)).run(output="x")
    assert len(judge_server.requests) == 1
    assert result.score == 0.25
    assert [m["scorer_id"] for m in result.analyze_step_result["members"]] == ["llm", "gate"]  # order given


async def test_nested_combinator_with_a_judge_counts_as_judged(judge_server: FakeJudgeServer) -> None:
    inner = weighted({"quality": (judged(judge_server), 1.0), "exact": (create_exact_match_scorer(), 1.0)})
    result = await all_of(inner, code("gate", 0.0)).run(output="x", ground_truth="x")
    assert judge_server.requests == []
    assert result.analyze_step_result["skipped"][0]["scorer_id"] == "weighted"


def test_sync_members_stay_sync() -> None:
    both = all_of(code("a", 1.0), code("b", 0.5))
    assert both.is_sync
    assert both.run_sync(output="x").score == 0.5
    assert not all_of(code("a", 1.0), create_scorer(id="b").generate_score(_async_one)).is_sync


async def _async_one(**_: object) -> float:
    return 1.0


def test_a_skipping_member_is_left_out() -> None:
    result = all_of(needs_ground_truth(), code("tone", 0.75)).run_sync(output="x")
    assert result.score == 0.75
    assert result.analyze_step_result["skipped"] == [
        {"scorer_id": "needs_gt", "skip_reason": "no_ground_truth", "reason": "the run has no ground truth"}
    ]
    assert any_of(needs_ground_truth(), code("tone", 0.0)).run_sync(output="x").score == 0.0


def test_a_skipping_member_decides_nothing(judge_server: FakeJudgeServer) -> None:
    judge_server.push({"score": 0.5})
    result = all_of(needs_ground_truth(), judged(judge_server)).run_sync(output="x")
    assert result.score == 0.5 and len(judge_server.requests) == 1


def test_every_member_skipping_skips_the_combinator() -> None:
    with pytest.raises(ScorerSkipped) as raised:
        all_of(needs_ground_truth("a"), needs_ground_truth("b")).run_sync(output="x")
    assert raised.value.skip_reason == "no_ground_truth"
    assert "a: the run has no ground truth; b: the run has no ground truth" in raised.value.message


def test_weighted_leaves_a_skipping_member_out() -> None:
    scorer = weighted({"exact": (needs_ground_truth(), 3), "tone": (code("tone", 0.5), 1)})
    result = scorer.run_sync(output="x")
    assert result.score == 0.5
    assert result.reason == "exact: skipped (no_ground_truth), tone: 0.50 (w=1)"
    assert result.analyze_step_result["skipped"][0]["name"] == "exact"
