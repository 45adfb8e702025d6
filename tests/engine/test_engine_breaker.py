"""The circuit breaker per judge model: transient failures after the judge's retries open it, its runs
are skipped (``judge_unavailable``) or wait, one WARNING says so, a probe call closes it again. Through
the real LiteLLM path against the fake judge server on 127.0.0.1."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import accounted, length_scorer, runs

from agentevals import PromptStep, ScoringEngine, create_scorer
from agentevals._scoring._limits._breaker import ModelBreaker
from agentevals.engine import (
    Breaker,
    BreakerStatus,
    DeliveryOptions,
    EngineStats,
    ExitOptions,
    ScoringOptions,
)
from agentevals.results import ScoreFailure, ScoreResult, ScoreSkipped
from agentevals.sinks import MemorySink
from agentevals.testing import FakeJudgeServer, Reply

MODEL = "openai/gpt-4o-mini"


class Clock:
    """A clock the test moves by hand: the breaker's open time passes without sleeping."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def judged(judge: Any, id: str = "judged") -> Any:
    return create_scorer(id=id, judge=judge).generate_score(
        PromptStep(description="grade", create_prompt=lambda run: f"Grade this: {run.input}")
    )


def engine_for(scorers: Any, memory: MemorySink, tmp_path: Path, **options: Any) -> ScoringEngine:
    return ScoringEngine(
        scorers,
        sinks=[memory],
        delivery=DeliveryOptions(dead_letter=tmp_path / "dead.jsonl"),
        exit=ExitOptions(handle_sigterm=False),
        **options,
    )


def breaker(stats: EngineStats) -> BreakerStatus:
    """The one judge endpoint's breaker (keyed by model and server address)."""
    (key, status), *others = stats.breakers.items()
    assert not others and key.startswith(f"{MODEL} at http://127.0.0.1:"), stats.breakers
    return status


def is_reclosed(status: BreakerStatus) -> bool:
    return status.opened > 0 and status.state == "closed"


def breaker_lines(caplog: pytest.LogCaptureFixture, level: int, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == level and text in r.getMessage()]


def flaky_server(failures: int) -> FakeJudgeServer:
    """Fails its first ``failures`` requests with a 500, then grades every request."""
    return FakeJudgeServer([Reply.server_error()] * failures, responder=lambda _: {"score": 1.0})


def test_twenty_failures_open_it_runs_are_skipped_and_a_probe_closes_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agentevals")
    clock = Clock()
    memory = MemorySink()
    with flaky_server(20) as server:
        engine = engine_for(
            [judged(server.judge(max_attempts=4)), length_scorer()],  # 5 calls of 4 attempts: 20 failures
            memory,
            tmp_path,
            scoring=ScoringOptions(max_concurrency=1),
            breaker=Breaker(failures=5, reset_after=30.0, clock=clock),
        )
        for run in runs(30):
            engine.submit(run)
        assert engine.flush(timeout=60)
        assert len(server.requests) == 20  # no call once it opened
        stats = accounted(engine, "breaker open")
        assert (breaker(stats).state, breaker(stats).opened) == ("open", 1)
        assert breaker(stats).skipped == 25 and breaker(stats).failures == 5
        judged_records = {r.run_id: r for r in memory.records if r.scorer_id == "judged"}
        assert [isinstance(judged_records[f"run-{i}"], ScoreFailure) for i in range(30)] == [True] * 5 + [
            False
        ] * 25
        skipped = [r for r in judged_records.values() if isinstance(r, ScoreSkipped)]
        assert {r.skip_reason for r in skipped} == {"judge_unavailable"} and len(skipped) == 25
        assert stats.skipped_by_scorer == {"judged": 25, "short": 0}
        assert len(breaker_lines(caplog, logging.WARNING, "circuit breaker open")) == 1

        clock.now += 30.0  # open time over: the next call is the probe; it succeeds and closes it
        for run in runs(10, prefix="after"):
            engine.submit(run)
        assert engine.flush(timeout=60)
        engine.shutdown()
    assert len(server.requests) == 30
    stats = accounted(engine, "breaker closed")
    assert (breaker(stats).state, breaker(stats).opened) == ("closed", 1)
    after = [r for r in memory.records if r.scorer_id == "judged" and r.run_id.startswith("after")]
    assert len(after) == 10 and all(isinstance(r, ScoreResult) for r in after)
    assert len(breaker_lines(caplog, logging.WARNING, "circuit breaker open")) == 1
    assert len(breaker_lines(caplog, logging.WARNING, "circuit breaker closed")) == 1
    every_run = {run.run_id for run in [*runs(30), *runs(10, "after")]}
    for key in ("judged", "short"):  # no run lost: each has its record from each scorer
        assert sorted(r.run_id for r in memory.records if r.scorer_id == key) == sorted(every_run)


def test_a_failed_probe_opens_it_again_without_another_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="agentevals")
    clock = Clock()
    memory = MemorySink()
    with flaky_server(20) as server:  # one attempt per call: 20 failing calls
        engine = engine_for(
            [judged(server.judge(max_attempts=1))],
            memory,
            tmp_path,
            scoring=ScoringOptions(max_concurrency=1),
            breaker=Breaker(failures=5, reset_after=30.0, clock=clock),
        )
        rounds = 0
        while not engine.stats().breakers or not is_reclosed(breaker(engine.stats())):
            rounds += 1
            assert rounds < 30, "the breaker never closed"
            for run in runs(3, prefix=f"round{rounds}"):
                engine.submit(run)
            assert engine.flush(timeout=60)
            clock.now += 30.0
        engine.shutdown()
    stats = accounted(engine, "probes")
    # 5 failures open it, then each probe fails once (15 probes) until the 21st request succeeds.
    assert rounds == 18 and len(server.requests) == 20 + 1 + 2
    assert breaker(stats) == BreakerStatus("closed", opened=16, skipped=1 + 15 * 2, failures=20)
    assert len(breaker_lines(caplog, logging.WARNING, "circuit breaker open")) == 1
    assert len(breaker_lines(caplog, logging.INFO, "probe call failed")) == 15
    assert len(breaker_lines(caplog, logging.WARNING, "circuit breaker closed")) == 1
    assert stats.records == 3 * rounds == stats.failed + stats.scored + stats.skipped


def test_with_concurrent_calls_no_run_is_lost_and_it_warns_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="agentevals")
    memory = MemorySink()
    with flaky_server(20) as server:
        engine = engine_for(
            [judged(server.judge(max_attempts=1))],
            memory,
            tmp_path,
            scoring=ScoringOptions(max_concurrency=8),
            breaker=Breaker(failures=5, reset_after=3600.0),
        )
        for run in runs(200):
            engine.submit(run)
        assert engine.flush(timeout=60)
        engine.shutdown()
    stats = accounted(engine, "concurrent")
    assert stats.records == 200 and breaker(stats).state == "open"
    assert len(server.requests) <= 20 + 8  # calls already admitted when it opened may still go out
    assert stats.skipped == breaker(stats).skipped >= 200 - 28
    assert len(breaker_lines(caplog, logging.WARNING, "circuit breaker open")) == 1
    assert sorted(r.run_id for r in memory.records) == sorted(r.run_id for r in runs(200))


def test_permanent_errors_do_not_open_it(tmp_path: Path) -> None:
    memory = MemorySink()
    with FakeJudgeServer([Reply.error(401, "bad key")] * 10) as server:
        engine = engine_for(
            [judged(server.judge())],
            memory,
            tmp_path,
            scoring=ScoringOptions(max_concurrency=1),
            breaker=Breaker(failures=3),
        )
        for run in runs(10):
            engine.submit(run)
        assert engine.flush(timeout=60)
        engine.shutdown()
    stats = accounted(engine, "401s")
    assert stats.failed == 10 and len(server.requests) == 10
    assert (breaker(stats).state, breaker(stats).opened) == ("closed", 0)


def test_breaker_none_turns_it_off(tmp_path: Path) -> None:
    memory = MemorySink()
    with flaky_server(30) as server:
        engine = engine_for(
            [judged(server.judge(max_attempts=1))],
            memory,
            tmp_path,
            scoring=ScoringOptions(max_concurrency=1),
            breaker=None,
        )
        for run in runs(30):
            engine.submit(run)
        assert engine.flush(timeout=60)
        engine.shutdown()
    stats = accounted(engine, "no breaker")
    assert stats.failed == 30 and stats.breakers == {} and len(server.requests) == 30


def test_on_open_wait_holds_the_calls_until_the_probe_closes_it(tmp_path: Path) -> None:
    memory = MemorySink()
    with flaky_server(2) as server:
        engine = engine_for(
            [judged(server.judge(max_attempts=1))],
            memory,
            tmp_path,
            scoring=ScoringOptions(max_concurrency=4, timeout=30.0),
            breaker=Breaker(failures=2, reset_after=0.2, on_open="wait"),
        )
        for run in runs(2, prefix="fail"):
            engine.submit(run)
        assert engine.flush(timeout=60)
        assert breaker(engine.stats()).state == "open"
        for run in runs(6, prefix="wait"):
            engine.submit(run)
        assert engine.flush(timeout=60)
        engine.shutdown()
    stats = accounted(engine, "wait")
    assert (stats.failed, stats.scored, stats.skipped) == (2, 6, 0)
    assert breaker(stats).state == "closed" and breaker(stats).skipped == 0


def test_on_open_wait_is_bounded_by_the_scorer_timeout(tmp_path: Path) -> None:
    memory = MemorySink()
    with flaky_server(2) as server:
        engine = engine_for(
            [judged(server.judge(max_attempts=1))],
            memory,
            tmp_path,
            scoring=ScoringOptions(max_concurrency=1, timeout=0.5),
            breaker=Breaker(failures=2, reset_after=3600.0, on_open="wait"),
        )
        for run in runs(4):
            engine.submit(run)
        assert engine.flush(timeout=60)
        engine.shutdown()
    stats = accounted(engine, "wait out of time")
    assert (stats.failed, stats.skipped) == (2, 2)  # skipped, not timed out: it would not close in time
    assert {r.skip_reason for r in memory.records if isinstance(r, ScoreSkipped)} == {"judge_unavailable"}


def test_the_same_model_behind_two_servers_has_two_breakers(tmp_path: Path) -> None:
    memory = MemorySink()
    with flaky_server(100) as down, FakeJudgeServer(responder=lambda _: {"score": 1.0}) as up:
        engine = engine_for(
            [judged(down.judge(max_attempts=1), "down"), judged(up.judge(), "up")],
            memory,
            tmp_path,
            scoring=ScoringOptions(max_concurrency=1),
            breaker=Breaker(failures=3),
        )
        for run in runs(10):
            engine.submit(run)
        assert engine.flush(timeout=60)
        engine.shutdown()
    stats = accounted(engine, "two servers")
    assert sorted(status.state for status in stats.breakers.values()) == ["closed", "open"]
    assert all(
        "fake-key" not in key and key.startswith(f"{MODEL} at http://127.0.0.1:") for key in stats.breakers
    )
    assert stats.skipped_by_scorer == {"down": 7, "up": 0}


def test_a_failure_rate_over_the_window_opens_it() -> None:
    clock = Clock()
    breaker = ModelBreaker(
        MODEL, Breaker(failures=100, failure_rate=0.5, min_calls=6, window=60.0, clock=clock)
    )
    for answered in (True, False, True, False, True):
        breaker.record(answered, probe=False)
        clock.now += 1
    assert breaker.state == "closed"  # 5 calls: fewer than min_calls
    breaker.record(False, probe=False)  # 3 failed of 6
    assert breaker.state == "open" and breaker.admit() is False
    clock.now += 30.0
    assert breaker.admit() is None and breaker.admit() is False  # one probe at a time
    breaker.record(True, probe=True)
    assert breaker.state == "closed"
    clock.now += 1000  # old outcomes leave the window
    for answered in (False, True, True, True, True, True, False):
        breaker.record(answered, probe=False)
    assert breaker.state == "closed"


def test_failures_that_left_the_window_no_longer_count() -> None:
    clock = Clock()
    breaker = ModelBreaker(
        MODEL, Breaker(failures=100, failure_rate=0.5, min_calls=4, window=10.0, clock=clock)
    )
    for answered in (False, False, True):
        breaker.record(answered, probe=False)
    clock.now += 20.0  # those three leave the window with the next call
    for answered in (True, True, True, False):
        breaker.record(answered, probe=False)
    assert breaker.state == "closed"  # 1 failed of the 4 in the window
    breaker.record(False, probe=False)
    breaker.record(False, probe=False)
    assert breaker.state == "open"  # 3 failed of 6


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"failures": 0}, "failures=...) must be a whole number >= 1"),
        ({"reset_after": -1}, "reset_after=...) must be a finite number of seconds > 0"),
        ({"failure_rate": 1.5}, "failure_rate=...) must be a share in (0, 1] or None"),
        ({"on_open": "queue"}, "on_open=...) must be 'skip' or 'wait'"),
        ({"reset": 3}, "unknown breaker key(s) ['reset']"),
    ],
)
def test_a_bad_breaker_is_a_clear_value_error(options: dict[str, Any], message: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError) as info:
        engine_for([length_scorer()], MemorySink(), tmp_path, breaker=options)
    assert message in str(info.value)
