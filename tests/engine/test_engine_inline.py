"""Sync scorers scored inline (no task), lazily built runs, and batching of the dispatch."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

from engine_helpers import length_scorer, runs

from agentevals import Run, ScoreResult, ScoringEngine, create_scorer
from agentevals.engine import DeliveryOptions, QueueOptions, ScoringOptions
from agentevals.errors import RunBuildError
from agentevals.results import ScoreFailure
from agentevals.sinks import MemorySink
from agentevals.steps import is_scoring


def test_sync_and_async_scorers_are_told_apart() -> None:
    async def later(run: Run) -> float:
        return 1.0

    class AsyncCall:
        async def __call__(self, run: Run) -> float:
            return 1.0

    assert length_scorer().is_sync
    assert not create_scorer(id="a").generate_score(later).is_sync
    assert not create_scorer(id="b").generate_score(AsyncCall()).is_sync
    prompt = create_scorer(id="c", judge="openai/gpt-4o-mini").generate_score(
        {"description": "judge", "create_prompt": lambda run: "score it"}
    )
    assert not prompt.is_sync


def test_inline_scorer_sees_its_own_context_and_records_are_live(dead_letter: Path) -> None:
    seen: list[bool] = []

    def score(run: Run) -> float:
        seen.append(is_scoring())
        return 0.5

    memory = MemorySink()
    engine = ScoringEngine(
        [create_scorer(id="inline").generate_score(score)],
        sinks=[memory],
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    engine.submit(Run(run_id="r1", output="x"))
    assert engine.shutdown(timeout=10)
    assert seen == [True]
    [record] = memory.records
    assert isinstance(record, ScoreResult)
    assert (record.score, record.source, record.run_id) == (0.5, "live", "r1")


def test_a_sync_step_returning_an_awaitable_finishes_in_the_background(dead_letter: Path) -> None:
    async def slow_score() -> float:
        await asyncio.sleep(0.01)
        assert is_scoring()  # the context the step started in is kept when it resumes
        return 0.75

    async def hanging() -> float:
        await asyncio.sleep(30)
        return 1.0

    sneaky = create_scorer(id="sneaky").generate_score(lambda run: slow_score())
    stuck = create_scorer(id="stuck").generate_score(lambda run: hanging())
    assert sneaky.is_sync and stuck.is_sync  # they look sync: the engine finds out while running them
    memory = MemorySink()
    engine = ScoringEngine(
        [sneaky, stuck, length_scorer()],
        sinks=[memory],
        scoring=ScoringOptions(timeout=0.2),
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    for run in runs(3):
        engine.submit(run)
    assert engine.shutdown(timeout=10)
    by_scorer: dict[str, list[Any]] = {}
    for record in memory.records:
        by_scorer.setdefault(record.scorer_id, []).append(record)
    assert [r.score for r in by_scorer["sneaky"]] == [0.75] * 3
    assert [r.score for r in by_scorer["short"]] == [1.0] * 3
    assert all(isinstance(r, ScoreFailure) and r.error_type == "TimeoutError" for r in by_scorer["stuck"])
    assert len(by_scorer["stuck"]) == 3


def test_a_raising_inline_scorer_gives_an_error_record(dead_letter: Path) -> None:
    def boom(run: Run) -> float:
        raise KeyError("missing")

    memory = MemorySink()
    engine = ScoringEngine(
        [create_scorer(id="boom").generate_score(boom)],
        sinks=[memory],
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    engine.submit(Run(run_id="r1", output="x"))
    assert engine.shutdown(timeout=10)
    [record] = memory.records
    assert isinstance(record, ScoreFailure)
    assert (record.error_type, record.failed_step, record.source) == ("KeyError", "generate_score", "live")


def test_lazy_runs_are_built_only_when_sampled(dead_letter: Path) -> None:
    built: list[str] = []

    def builder(run_id: str) -> Any:
        def build() -> Run:
            built.append(run_id)
            return Run(run_id=run_id, output="short")

        return build

    memory = MemorySink()
    sampled = {"short": {"scorer": length_scorer(), "sampling": {"type": "ratio", "rate": 0.5}}}
    engine = ScoringEngine(sampled, sinks=[memory], delivery=DeliveryOptions(dead_letter=dead_letter))
    accepted = [
        rid for rid in (f"run-{i}" for i in range(200)) if engine.submit_lazy(builder(rid), run_id=rid)
    ]
    assert engine.shutdown(timeout=10)
    assert sorted(built) == sorted(accepted)  # sampled-out runs were never built
    assert 50 < len(accepted) < 150
    assert sorted(r.run_id for r in memory.records) == sorted(accepted)
    stats = engine.stats()
    assert stats.accepted + stats.sampled_out == 200


def test_a_failing_build_gives_one_error_record_per_sampled_scorer(dead_letter: Path) -> None:
    def broken() -> Run:
        raise AttributeError("no messages")

    memory = MemorySink()
    engine = ScoringEngine(
        [length_scorer("a"), length_scorer("b")],
        sinks=[memory],
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    assert engine.submit_lazy(broken, run_id="r1", trace_id="t1")
    assert engine.submit_lazy(lambda: "not a run", run_id="r2")  # type: ignore[arg-type, return-value]
    assert engine.submit_lazy(lambda: Run(run_id="r3", output="ok"), run_id="r3")
    assert engine.shutdown(timeout=10)
    failures = sorted((r.run_id, r.scorer_id) for r in memory.records if isinstance(r, ScoreFailure))
    assert failures == [("r1", "a"), ("r1", "b"), ("r2", "a"), ("r2", "b")]
    first = next(r for r in memory.records if r.run_id == "r1")
    assert first.error_type == RunBuildError.__name__ and first.trace_id == "t1"
    assert "AttributeError: no messages" in first.error_message
    assert sorted(r.scorer_id for r in memory.records if r.run_id == "r3") == ["a", "b"]
    assert engine.stats().failed == 4


def test_a_custom_sampler_gets_the_built_run(dead_letter: Path) -> None:
    memory = MemorySink()
    entry = {"scorer": length_scorer(), "sampling": lambda run: run.output_text == "keep"}
    engine = ScoringEngine(
        {"short": entry}, sinks=[memory], delivery=DeliveryOptions(dead_letter=dead_letter)
    )
    assert engine.submit_lazy(lambda: Run(run_id="r1", output="keep"), run_id="r1")
    assert not engine.submit_lazy(lambda: Run(run_id="r2", output="drop"), run_id="r2")
    assert engine.shutdown(timeout=10)
    assert [r.run_id for r in memory.records] == ["r1"]


def test_runs_gather_for_the_linger_and_a_half_full_queue_cuts_it_short(dead_letter: Path) -> None:
    memory = MemorySink()
    scored = threading.Event()

    def score(run: Run) -> float:
        scored.set()
        return 1.0

    scorer = create_scorer(id="s").generate_score(score)
    engine = ScoringEngine(
        [scorer],
        sinks=[memory],
        queue=QueueOptions(linger=60.0, size=4),
        delivery=DeliveryOptions(linger=60.0, dead_letter=dead_letter),
    )
    engine.submit(Run(run_id="r0", output="x"))
    time.sleep(0.2)
    assert not scored.is_set() and engine.stats().queued == 1  # waiting for more runs
    engine.submit(Run(run_id="r1", output="x"))  # the queue is now half full: score at once
    assert scored.wait(timeout=10)
    assert engine.shutdown(timeout=10)
    assert sorted(r.run_id for r in memory.records) == ["r0", "r1"]


def test_runs_linger_again_once_a_flush_is_over(dead_letter: Path) -> None:
    memory = MemorySink()
    engine = ScoringEngine(
        [length_scorer()],
        sinks=[memory],
        queue=QueueOptions(linger=60.0),
        delivery=DeliveryOptions(linger=60.0, dead_letter=dead_letter),
    )
    engine.submit(Run(run_id="r0", output="x"))
    assert engine.flush(timeout=10)  # cuts the linger short for what is queued
    engine.submit(Run(run_id="r1", output="x"))
    time.sleep(0.2)
    assert engine.stats().queued == 1  # the flush's hurry ended with it: r1 waits for more runs
    assert engine.shutdown(timeout=10)
    assert sorted(r.run_id for r in memory.records) == ["r0", "r1"]


def test_a_build_failing_for_a_custom_sampler_still_gives_error_records(dead_letter: Path) -> None:
    def broken() -> Run:
        raise KeyError("messages")

    memory = MemorySink()
    scorers = {
        "custom": {"scorer": length_scorer("custom"), "sampling": lambda run: True},
        "never": {"scorer": length_scorer("never"), "sampling": {"type": "ratio", "rate": 0.0}},
        "always": length_scorer("always"),
    }
    engine = ScoringEngine(scorers, sinks=[memory], delivery=DeliveryOptions(dead_letter=dead_letter))
    assert engine.submit_lazy(broken, run_id="r1", trace_id="t1")  # built here, for the sampler
    assert engine.shutdown(timeout=10)
    assert sorted(r.scorer_id for r in memory.records) == ["always", "custom"]
    assert all(r.error_type == RunBuildError.__name__ for r in memory.records)
    assert all("KeyError: 'messages'" in r.error_message for r in memory.records)
    stats = engine.stats()
    assert (stats.failed, stats.invalid) == (2, 0)
