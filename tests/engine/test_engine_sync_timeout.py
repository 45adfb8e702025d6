"""The scoring timeout holds for sync steps: a stuck call becomes a TimeoutError record on its own, and the
engine goes on scoring (sync scorers run in chunks on a worker thread, which a stuck call abandons)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from engine_helpers import accounted, length_scorer, runs

from agentevals import Run, ScoringEngine, create_scorer
from agentevals.engine import DeliveryOptions, QueueOptions, ScoringOptions
from agentevals.results import ScoreFailure
from agentevals.sinks import MemorySink


def test_a_stuck_sync_step_times_out_and_the_engine_goes_on(dead_letter: Path) -> None:
    never = threading.Event()

    def stuck(run: Run) -> float:
        if run.run_id == "run-70":  # in the second chunk, after records of the first were produced
            never.wait()
        return 1.0

    memory = MemorySink()
    engine = ScoringEngine(
        [create_scorer(id="stuck").generate_score(stuck), length_scorer()],
        sinks=[memory],
        queue=QueueOptions(linger=0),
        scoring=ScoringOptions(timeout=0.3),
        delivery=DeliveryOptions(dead_letter=dead_letter, linger=0),
    )
    try:
        for run in runs(100):
            engine.submit(run)
        started = time.monotonic()
        report = engine.flush(timeout=10)
        assert report and report.completed, report
        assert time.monotonic() - started < 5
        assert (report.scored, report.failed) == (199, 1)
        (failure,) = [r for r in memory.records if isinstance(r, ScoreFailure)]
        assert failure.run_id == "run-70" and failure.scorer_id == "stuck"
        assert failure.error_type == "TimeoutError" and "within 0.3 s" in failure.error_message

        for run in runs(5, prefix="later"):  # a fresh worker scores what comes next
            engine.submit(run)
        assert engine.flush(timeout=10).scored == 10
        accounted(engine, "stuck sync step timed out")
    finally:
        never.set()
        engine.shutdown()


def test_a_per_entry_timeout_applies_to_its_sync_calls_only(dead_letter: Path) -> None:
    release = threading.Event()

    def slow(run: Run) -> float:
        release.wait(2.0)
        return 0.5

    memory = MemorySink()
    engine = ScoringEngine(
        {"slow": {"scorer": create_scorer(id="slow").generate_score(slow), "timeout": 0.1}},
        sinks=[memory],
        queue=QueueOptions(linger=0),
        scoring=ScoringOptions(timeout=None),
        delivery=DeliveryOptions(dead_letter=dead_letter, linger=0),
    )
    try:
        engine.submit(Run(run_id="a", input="q", output="a"))
        report = engine.flush(timeout=5)
        assert report and report.failed == 1 and memory.records[0].error_type == "TimeoutError"  # type: ignore[union-attr]
    finally:
        release.set()
        engine.shutdown()
