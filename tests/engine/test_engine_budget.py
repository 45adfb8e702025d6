"""Judge budgets: spend per window (calls, tokens, USD from LiteLLM's price of the reported usage) is
reserved before each judge call and settled after; once spent, runs get skipped records with
``skip_reason="budget"``. Through the real LiteLLM path against the fake judge server on 127.0.0.1."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import accounted, length_scorer, runs
from pydantic import BaseModel

from agentevals import PromptStep, Run, ScoringEngine, create_scorer
from agentevals._scoring._judge._litellm import litellm
from agentevals.engine import Budget, DeliveryOptions, ExitOptions, ScorerEntry, ScoringOptions
from agentevals.results import ScoreResult, ScoreSkipped
from agentevals.sinks import MemorySink
from agentevals.testing import ChatRequest, FakeJudgeServer, Reply

PRICED_MODEL = "agentevals-priced-judge"
PRICE = 12 * 0.0005 + 8 * 0.00025  # USD per call: the fake server reports 12 prompt + 8 completion tokens


class Clock:
    """A clock the test moves by hand: budget windows reset without sleeping."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Verdict(BaseModel):
    verdict: str


def judged(judge: Any, id: str = "judged") -> Any:
    return create_scorer(id=id, judge=judge).generate_score(
        PromptStep(description="grade", create_prompt=lambda run: f"Grade this: {run.input}")
    )


def two_calls(judge: Any, id: str = "two") -> Any:
    """A scorer making two judge calls per run (analyze, then score)."""
    return (
        create_scorer(id=id, judge=judge)
        .analyze(PromptStep(description="look", create_prompt=lambda run: "look", output_schema=Verdict))
        .generate_score(PromptStep(description="grade", create_prompt=lambda run: "grade"))
    )


def engine_for(scorers: Any, memory: MemorySink, tmp_path: Path, **options: Any) -> ScoringEngine:
    return ScoringEngine(
        scorers,
        sinks=[memory],
        delivery=DeliveryOptions(dead_letter=tmp_path / "dead.jsonl"),
        exit=ExitOptions(handle_sigterm=False),
        breaker=None,
        **options,
    )


def score_reply(request: ChatRequest) -> Reply:
    if "grade" in request.prompt.lower():
        return Reply.json({"score": 1.0})
    return Reply.json({"verdict": "fine"})


def test_a_call_budget_lets_exactly_its_calls_through_then_skips_until_the_window_resets(
    tmp_path: Path,
) -> None:
    clock = Clock()
    memory = MemorySink()
    with FakeJudgeServer(responder=score_reply) as server:
        engine = engine_for(
            {
                "judged": {
                    "scorer": judged(server.judge()),
                    "budget": {"calls": 50, "per": "hour", "clock": clock},
                },
                "short": length_scorer(),  # a code scorer: never touched by a judge budget
            },
            memory,
            tmp_path,
            scoring=ScoringOptions(max_concurrency=8),
        )
        for run in runs(120):
            engine.submit(run)
        assert engine.flush(timeout=60)
        assert len(server.requests) == 50  # a call budget reserves 1 per call: never overrun
        stats = accounted(engine, "budget 50 calls")
        judged_records = [r for r in memory.records if r.scorer_id == "judged"]
        assert sum(isinstance(r, ScoreResult) for r in judged_records) == 50
        skipped = [r for r in judged_records if isinstance(r, ScoreSkipped)]
        assert len(skipped) == 70 and {r.skip_reason for r in skipped} == {"budget"}
        assert "50 calls/hour is spent" in skipped[0].reason
        assert stats.skipped_by_scorer == {"judged": 70, "short": 0}
        usage = stats.budgets["judged: 50 calls/hour"]
        assert (usage.spent, usage.reserved, usage.skipped, usage.exhausted) == (50, 0, 70, 1)
        assert sum(isinstance(r, ScoreResult) for r in memory.records if r.scorer_id == "short") == 120

        clock.now += 3600  # the next hour: the budget is whole again
        for run in runs(10, prefix="next-hour"):
            engine.submit(run)
        assert engine.flush(timeout=60)
        assert len(server.requests) == 60
        stats = accounted(engine, "next hour")
        assert stats.budgets["judged: 50 calls/hour"].spent == 10
        assert stats.skipped_by_scorer["judged"] == 70
        engine.shutdown()
    assert {r.run_id for r in memory.records} == {r.run_id for r in [*runs(120), *runs(10, "next-hour")]}


def test_a_usd_budget_counts_litellms_price_of_the_reported_usage(tmp_path: Path) -> None:
    litellm().register_model(
        {
            f"openai/{PRICED_MODEL}": {
                "input_cost_per_token": 0.0005,
                "output_cost_per_token": 0.00025,
                "cache_creation_input_token_cost": 0.0,
                "cache_read_input_token_cost": 0.0,
                "litellm_provider": "openai",
                "mode": "chat",
            }
        }
    )
    limit = 50 * PRICE  # 50 calls' worth
    in_flight = 8
    memory = MemorySink()
    with FakeJudgeServer(responder=lambda _: Reply.slow(0.01, {"score": 1.0}), model=PRICED_MODEL) as server:
        engine = engine_for(
            [judged(server.judge())],
            memory,
            tmp_path,
            scoring=ScoringOptions(max_concurrency=in_flight),
            budgets=[Budget(usd=limit, per="day")],
        )
        for run in runs(150):
            engine.submit(run)
        assert engine.flush(timeout=60)
        engine.shutdown()
    calls = len(server.requests)
    print(f"USD budget of 50 calls' worth: {calls} calls reached the server")
    assert 50 <= calls <= 50 + in_flight  # overrun by at most the calls in flight
    stats = accounted(engine, "usd budget")
    usage = stats.budgets[f"${limit:g}/day"]
    assert usage.spent == pytest.approx(calls * PRICE)  # the provider's price of what it served
    assert stats.scored == calls and stats.skipped == usage.skipped == 150 - calls
    assert {r.skip_reason for r in memory.records if isinstance(r, ScoreSkipped)} == {"budget"}


def test_a_token_budget_and_a_scorer_making_two_calls_per_run(tmp_path: Path) -> None:
    memory = MemorySink()
    with FakeJudgeServer(responder=score_reply) as server:
        # 20 tokens a call: 100 tokens are 5 calls, i.e. two runs and the first call of a third.
        entry = ScorerEntry(scorer=two_calls(server.judge()), budget=Budget(tokens=100, per="minute"))
        engine = engine_for({"two": entry}, memory, tmp_path, scoring=ScoringOptions(max_concurrency=1))
        for run in runs(4):
            engine.submit(run)
        assert engine.flush(timeout=60)
        engine.shutdown()
    assert len(server.requests) == 5
    by_run = {r.run_id: r for r in memory.records}
    assert [type(by_run[f"run-{i}"]).__name__ for i in range(4)] == [
        "ScoreResult",
        "ScoreResult",
        "ScoreSkipped",
        "ScoreSkipped",
    ]
    third = by_run["run-2"]
    assert isinstance(third, ScoreSkipped) and third.skip_reason == "budget"
    assert third.skipped_step == "generate_score" and len(third.judge_calls) == 1  # the work done is kept
    stats = accounted(engine, "token budget")
    assert stats.budgets["two: 100 tokens/minute"].spent == 100


def test_scorer_budgets_and_a_global_budget_together(tmp_path: Path) -> None:
    memory = MemorySink()
    with FakeJudgeServer(responder=score_reply) as server:
        engine = engine_for(
            [judged(server.judge(), "a"), judged(server.judge(), "b")],
            memory,
            tmp_path,
            scoring=ScoringOptions(max_concurrency=4),
            budgets=[Budget(calls=3, per="day", scorer="a"), {"calls": 8, "per": "day"}],
        )
        for run in runs(10):
            engine.submit(run)
        assert engine.flush(timeout=60)
        engine.shutdown()
    assert len(server.requests) == 8
    scored = {
        key: sum(isinstance(r, ScoreResult) for r in memory.records if r.scorer_id == key) for key in "ab"
    }
    assert scored["a"] <= 3 and scored["a"] + scored["b"] == 8
    stats = accounted(engine, "two budgets")
    assert set(stats.budgets) == {"a: 3 calls/day", "8 calls/day"}
    assert stats.skipped == 20 - 8


def test_runs_outside_an_engine_are_not_limited(tmp_path: Path) -> None:
    with FakeJudgeServer(responder=score_reply) as server:
        scorer = judged(server.judge())
        engine = engine_for(
            {"judged": {"scorer": scorer, "budget": {"calls": 1, "per": "day"}}}, MemorySink(), tmp_path
        )
        engine.submit(Run(input="q", output="a"))
        assert engine.flush(timeout=30)
        engine.shutdown()
        for _ in range(3):  # the same scorer called directly: the engine's budget is not in play
            assert scorer.run_sync(input="q", output="a").score == 1.0
    assert len(server.requests) == 4


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        ({"per": "day"}, "exactly one of usd=, tokens= or calls="),
        ({"usd": 1.0, "calls": 3, "per": "day"}, "got usd, calls"),
        ({"usd": -1.0, "per": "day"}, "must be > 0"),
        ({"usd": float("inf"), "per": "day"}, "number of US dollars"),
        ({"tokens": 1.5, "per": "day"}, "whole number"),
        ({"calls": True, "per": "day"}, "whole number"),
        ({"calls": 10}, "per=...) must be 'minute', 'hour' or 'day'"),
        ({"calls": 10, "per": "week"}, "got 'week'"),
        ({"calls": 10, "per": "day", "scorer": ""}, "scorer key"),
        ({"calls": 10, "per": "day", "window": 3}, "unknown budget key(s) ['window']"),
    ],
)
def test_a_bad_budget_is_a_clear_value_error(budget: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as info:
        Budget.of(budget)
    assert message in str(info.value)


def test_bad_budgets_on_the_engine_fail_at_construction(tmp_path: Path) -> None:
    scorer = length_scorer()
    with pytest.raises(
        ValueError, match=r"names scorer 'nope', which the engine does not have; its scorers are \['short'\]"
    ):
        engine_for([scorer], MemorySink(), tmp_path, budgets=[Budget(calls=3, per="day", scorer="nope")])
    with pytest.raises(ValueError, match="given twice"):
        engine_for([scorer], MemorySink(), tmp_path, budgets=[Budget(calls=3, per="day")] * 2)
    with pytest.raises(ValueError, match="a scorer entry's budget is its own"):
        engine_for(
            {"short": {"scorer": scorer, "budget": Budget(calls=3, per="day", scorer="other")}},
            MemorySink(),
            tmp_path,
        )
    with pytest.raises(TypeError, match="budgets must be a list"):
        engine_for([scorer], MemorySink(), tmp_path, budgets="5 usd")
    with pytest.raises(TypeError, match="a budget is a Budget"):
        ScorerEntry(scorer=scorer, budget=5.0)  # type: ignore[arg-type]


def test_a_call_cut_off_by_the_scorer_timeout_gives_its_reservation_back_as_spend(tmp_path: Path) -> None:
    memory = MemorySink()
    with FakeJudgeServer(responder=lambda _: Reply.slow(2.0, {"score": 1.0})) as server:
        engine = engine_for(
            [judged(server.judge())],
            memory,
            tmp_path,
            scoring=ScoringOptions(max_concurrency=2, timeout=0.3),
            budgets=[Budget(calls=3, per="day")],
        )
        for run in runs(5):
            engine.submit(run)
        assert engine.flush(timeout=60)
        engine.shutdown()
    stats = accounted(engine, "cut off")
    usage = stats.budgets["3 calls/day"]
    assert (usage.spent, usage.reserved) == (3, 0)  # nothing stays held by calls that were cancelled
    assert (stats.failed, stats.skipped) == (3, 2)
    assert {r.error_type for r in memory.records if r.outcome == "failed"} == {"TimeoutError"}


def test_a_usd_budget_on_an_unpriced_model_warns_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="agentevals.engine")
    memory = MemorySink()
    with FakeJudgeServer(responder=score_reply, model="agentevals-unpriced-judge") as server:
        engine = engine_for(
            [judged(server.judge())],
            memory,
            tmp_path,
            scoring=ScoringOptions(max_concurrency=2),
            budgets=[Budget(usd=0.01, per="day")],
        )
        for run in runs(6):
            engine.submit(run)
        assert engine.flush(timeout=60)
        engine.shutdown()
    stats = accounted(engine, "unpriced")
    assert stats.scored == 6 and stats.budgets["$0.01/day"].spent == 0
    lines = [r.getMessage() for r in caplog.records if "has no price" in r.getMessage()]
    assert (
        len(lines) == 1 and "agentevals-unpriced-judge" in lines[0] and "litellm.register_model" in lines[0]
    )
