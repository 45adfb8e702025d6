"""Every run and every record accounted for: BaseExceptions in steps and sinks, shutdown out of time,
runs refused after shutdown, evictions, invalid retry policies and timeouts."""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import FAST_RETRY, accounted, gated_scorer, length_scorer, runs

from agentevals import Run, ScoreRecord, ScoringEngine, create_scorer
from agentevals.engine import DeliveryOptions, EngineStats, QueueOptions, ScoringOptions
from agentevals.results import ScoreFailure
from agentevals.sinks import MemorySink, RetryPolicy


class Boom(BaseException):
    """Not an ``Exception``: slips past ``except Exception``."""


BASE_ERRORS: list[Callable[[], BaseException]] = [
    asyncio.CancelledError,
    lambda: SystemExit(3),
    KeyboardInterrupt,
    lambda: Boom("boom"),
]
BASE_IDS = ["CancelledError", "SystemExit", "KeyboardInterrupt", "Boom"]


def _raising_scorer(make: Callable[[], BaseException], *, is_async: bool) -> Any:
    def fail(run: Run) -> float:
        if run.run_id == "run-3":
            raise make()
        return 1.0

    async def afail(run: Run) -> float:
        await asyncio.sleep(0)
        return fail(run)

    return create_scorer(id="raiser").generate_score(afail if is_async else fail)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("make", BASE_ERRORS, ids=BASE_IDS)
def test_a_step_raising_a_base_exception_becomes_an_error_record(
    make: Callable[[], BaseException], is_async: bool, dead_letter: Path
) -> None:
    memory = MemorySink()
    engine = ScoringEngine(
        _raising_scorer(make, is_async=is_async),
        sinks=[memory],
        queue=QueueOptions(linger=0),
        delivery=DeliveryOptions(dead_letter=dead_letter, linger=0),
    )
    for run in runs(10):
        assert engine.submit(run)
    report = engine.flush(timeout=10)
    assert report and report.completed
    for run in runs(5, "later"):  # the engine still works afterwards
        assert engine.submit(run)
    assert engine.shutdown(timeout=10)
    failures = [r for r in memory.records if isinstance(r, ScoreFailure)]
    assert [(f.run_id, f.error_type) for f in failures] == [("run-3", type(make()).__name__)]
    stats = accounted(engine)
    assert (stats.scored, stats.failed, stats.finished) == (14, 1, 15)


@pytest.mark.parametrize("make", BASE_ERRORS, ids=BASE_IDS)
def test_a_redactor_or_run_builder_raising_a_base_exception_is_counted(
    make: Callable[[], BaseException], dead_letter: Path
) -> None:
    def redact(record: ScoreRecord) -> ScoreRecord:
        if record.run_id == "run-1":
            raise make()
        return record

    def build() -> Run:
        raise make()

    memory = MemorySink()
    engine = ScoringEngine(
        length_scorer(), sinks=[memory], redact=redact, delivery=DeliveryOptions(dead_letter=dead_letter)
    )
    for run in runs(3):
        engine.submit(run)
    engine.submit_lazy(build, run_id="lazy")
    assert engine.shutdown(timeout=10)
    errors = {r.run_id: r.error_type for r in memory.records if isinstance(r, ScoreFailure)}
    assert errors == {"run-1": "RedactionError", "lazy": "RunBuildError"}
    assert accounted(engine).records == 4


class RaisingSink:
    """Raises ``make()`` on its first ``failures`` writes."""

    name = "raising"

    def __init__(self, make: Callable[[], BaseException], failures: int) -> None:
        self.make, self.failures, self.calls = make, failures, 0
        self.records: list[ScoreRecord] = []

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.make()
        self.records.extend(records)

    async def close(self) -> None:
        return None


@pytest.mark.parametrize("make", BASE_ERRORS, ids=BASE_IDS)
def test_a_sink_raising_a_base_exception_is_retried_then_dead_lettered(
    make: Callable[[], BaseException], dead_letter: Path
) -> None:
    recovering, broken, memory = RaisingSink(make, 2), RaisingSink(make, 10**9), MemorySink()
    broken.name = "broken"
    engine = ScoringEngine(
        length_scorer(),
        sinks=[recovering, broken, memory],
        delivery=DeliveryOptions(retry=FAST_RETRY, dead_letter=dead_letter),
    )
    for run in runs(20):
        engine.submit(run)
    report = engine.shutdown(timeout=20)
    assert report.completed and not report  # completed, but with dead letters
    assert len(recovering.records) == len(memory.records) == 20
    stats = accounted(engine)
    assert stats.written == {"raising": 20, "broken": 0, "memory": 20}
    assert (stats.dead_lettered, stats.lost) == (20, 0)
    assert len(dead_letter.read_text().splitlines()) == 20


def test_shutdown_out_of_time_counts_the_abandoned_runs(dead_letter: Path) -> None:
    gate = threading.Event()
    memory = MemorySink()
    engine = ScoringEngine(
        [gated_scorer(gate), length_scorer()],
        sinks=[memory],
        scoring=ScoringOptions(max_concurrency=2),
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    for run in runs(50):
        engine.submit(run)
    report = engine.shutdown(timeout=0.3)
    gate.set()
    assert not report and not report.completed
    assert report.abandoned == 50  # each run waited on the gated scorer
    stats = accounted(engine, "shutdown out of time")
    assert (stats.accepted, stats.abandoned, stats.finished) == (50, 50, 0)
    # Records the quick scorer made before the end were written or dead-lettered, never lost.
    assert stats.records == stats.scored == len(memory.records) + stats.dead_lettered


def test_runs_refused_after_shutdown_are_counted(dead_letter: Path) -> None:
    engine = ScoringEngine(
        length_scorer(), sinks=[MemorySink()], delivery=DeliveryOptions(dead_letter=dead_letter)
    )
    engine.submit(runs(1)[0])
    assert engine.shutdown(timeout=10)
    assert engine.shutdown(timeout=10)  # a second shutdown is a no-op
    assert not engine.submit(runs(1, "late")[0])
    stats = accounted(engine)
    assert (stats.submitted, stats.dropped_shutdown, stats.dropped) == (2, 1, 1)


def test_drop_oldest_counts_each_eviction_once(dead_letter: Path) -> None:
    gate = threading.Event()
    memory = MemorySink()
    engine = ScoringEngine(
        gated_scorer(gate),
        sinks=[memory],
        queue=QueueOptions(size=10, overflow="drop_oldest", linger=5),
        scoring=ScoringOptions(max_concurrency=1),
        delivery=DeliveryOptions(linger=5, dead_letter=dead_letter),
    )
    accepted = [engine.submit(run) for run in runs(100)]
    assert all(accepted)  # accepted at that moment; most are evicted later
    gate.set()
    assert engine.shutdown(timeout=10)
    stats = accounted(engine, "drop_oldest")
    assert stats.submitted == stats.accepted == 100
    assert stats.dropped_evicted == stats.dropped == 100 - len(memory.records) > 0
    assert stats.finished == len(memory.records)


def test_flush_reports_counts_since_the_previous_report(dead_letter: Path) -> None:
    engine = ScoringEngine(
        length_scorer(), sinks=[MemorySink()], delivery=DeliveryOptions(dead_letter=dead_letter)
    )
    for run in runs(5):
        engine.submit(run)
    first = engine.flush(timeout=10)
    assert first and (first.scored, first.written, first.pending) == (5, 5, 0)
    engine.submit(runs(1, "again")[0])
    second = engine.flush(timeout=10)
    assert (second.scored, second.written) == (1, 1)
    last = engine.shutdown(timeout=10)
    assert last and last.scored == 0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"attempts": 2.5}, "attempts must be a whole number"),
        ({"attempts": 0}, "attempts must be a whole number"),
        ({"attempts": True}, "attempts must be a whole number"),
        ({"initial": math.nan}, "initial must be a finite number"),
        ({"max_wait": -1}, "max_wait must be a finite number"),
        ({"timeout": math.inf}, "timeout must be a positive, finite number"),
        ({"timeout": "5"}, "timeout must be a positive, finite number"),
    ],
)
def test_invalid_retry_policies_fail_at_construction(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RetryPolicy(**options)


def test_flush_and_shutdown_timeouts_are_checked(dead_letter: Path) -> None:
    engine = ScoringEngine(
        length_scorer(), sinks=[MemorySink()], delivery=DeliveryOptions(dead_letter=dead_letter)
    )
    with pytest.raises(ValueError, match="timeout must be a finite number"):
        engine.flush(timeout=math.nan)
    with pytest.raises(ValueError, match="timeout must be a finite number"):
        engine.shutdown(timeout=-1)
    assert engine.shutdown(timeout=5)


def test_stats_balance_in_the_simple_case() -> None:
    stats = EngineStats(submitted=3, accepted=2, sampled_out=1, finished=2, scored=2, written={"m": 2})
    assert stats.unbalanced() == []
    assert EngineStats(submitted=3, accepted=1).unbalanced()


def test_a_sync_step_that_never_returns_cannot_hang_shutdown(dead_letter: Path) -> None:
    never = threading.Event()

    def stuck(run: Run) -> float:
        if run.run_id == "run-2":
            never.wait()  # a sync step cannot be interrupted; without a timeout it is never given up
        return 1.0

    memory = MemorySink()
    engine = ScoringEngine(
        create_scorer(id="stuck").generate_score(stuck),
        sinks=[memory],
        queue=QueueOptions(linger=0),
        scoring=ScoringOptions(timeout=None),
        delivery=DeliveryOptions(dead_letter=dead_letter, linger=0),
    )
    for run in runs(10):
        engine.submit(run)
    reports: list[Any] = []
    closer = threading.Thread(target=lambda: reports.append(engine.shutdown(timeout=0.5)), daemon=True)
    closer.start()
    closer.join(10)
    try:
        assert not closer.is_alive(), "shutdown() hung on a sync step that never returns"
        report = reports[0]
        assert not report and not report.completed and report.abandoned >= 1
        stats = accounted(engine, "stuck sync step")
        assert stats.abandoned == report.abandoned and stats.finished + stats.abandoned == 10
    finally:
        never.set()


def test_a_bug_in_the_scoring_loop_is_logged_and_later_runs_are_still_scored(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from agentevals import Run, ScoringEngine, create_scorer
    from agentevals._engine import _dispatch
    from agentevals.sinks import MemorySink

    memory = MemorySink()
    scorer = create_scorer(id="one").generate_score(lambda run, **_: 1.0)
    engine = ScoringEngine(
        [scorer], sinks=[memory], queue=QueueOptions(linger=0), delivery=DeliveryOptions(linger=0)
    )
    real_drain = _dispatch.Dispatch._drain
    calls = {"n": 0}

    async def drain_once_broken(self: object) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("bug in the loop")
        await real_drain(self)  # type: ignore[arg-type]

    monkeypatch.setattr(_dispatch.Dispatch, "_drain", drain_once_broken)
    with caplog.at_level("ERROR", logger="agentevals.engine"):
        engine.submit(Run(input="a", output="b"))
        engine.flush(timeout=1)
        engine.submit(Run(input="c", output="d"))
        engine.flush(timeout=5)
    assert any("scoring loop failed" in r.getMessage() for r in caplog.records)
    assert [r.input for r in memory.records][-1] == "c"
    engine.shutdown()
