"""The engine: failures as records, timeouts, overflow, concurrency, config shapes, redaction, stats."""

from __future__ import annotations

import asyncio
import gc
import re
import threading
import weakref
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import gated_scorer, length_scorer, runs

from agentevals import Run, ScoreRecord, ScoreResult, ScoringEngine, create_scorer
from agentevals.engine import DeliveryOptions, QueueOptions, ScorerEntry, ScoringOptions
from agentevals.results import ScoreFailure
from agentevals.sinks import LoggingSink, MemorySink


def _raising_scorer() -> Any:
    def boom(run: Run) -> float:
        raise ValueError(f"cannot score {run.run_id}")

    return create_scorer(id="raiser").preprocess(lambda run: {"seen": run.run_id}).generate_score(boom)


def test_raising_scorer_becomes_an_error_record_and_others_still_score(dead_letter: Path) -> None:
    memory = MemorySink()
    engine = ScoringEngine(
        {"raiser": _raising_scorer(), "short": length_scorer()},
        sinks=[memory],
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    assert engine.submit(Run(run_id="r1", trace_id="t1", input="q", output="a", entity="bot"))
    assert engine.shutdown(timeout=10)
    by_id = {r.scorer_id: r for r in memory.records}
    failure = by_id["raiser"]
    assert isinstance(failure, ScoreFailure)
    assert (failure.run_id, failure.trace_id, failure.entity, failure.source) == ("r1", "t1", "bot", "live")
    assert failure.error_type == "ValueError" and failure.error_message == "cannot score r1"
    assert failure.failed_step == "generate_score"
    assert failure.preprocess_step_result == {"seen": "r1"}
    assert isinstance(by_id["short"], ScoreResult) and by_id["short"].score == 1.0
    stats = engine.stats()
    assert (stats.scored, stats.failed) == (1, 1)


def test_hanging_scorer_hits_its_timeout(dead_letter: Path) -> None:
    async def hang(run: Run) -> float:
        await asyncio.sleep(3600)
        return 1.0

    memory = MemorySink()
    engine = ScoringEngine(
        {
            "hang": ScorerEntry(scorer=create_scorer(id="hang").generate_score(hang), timeout=0.1),
            "short": length_scorer(),
        },
        sinks=[memory],
        scoring=ScoringOptions(timeout=30),
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    for run in runs(5):
        engine.submit(run)
    assert engine.shutdown(timeout=10)
    hung = [r for r in memory.records if r.scorer_id == "hang"]
    assert len(hung) == 5 and all(isinstance(r, ScoreFailure) for r in hung)
    assert {r.error_type for r in hung} == {"TimeoutError"}
    assert "within 0.1 s" in hung[0].error_message
    assert all(r.duration_ms >= 90 for r in hung)
    assert len([r for r in memory.records if r.scorer_id == "short"]) == 5


def test_engine_wide_timeout_applies_when_the_entry_has_none(dead_letter: Path) -> None:
    async def slow(run: Run) -> float:
        await asyncio.sleep(3600)
        return 0.0

    memory = MemorySink()
    engine = ScoringEngine(
        [create_scorer(id="slow").generate_score(slow)],
        sinks=[memory],
        scoring=ScoringOptions(timeout=0.05),
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    engine.submit(Run(output="x"))
    assert engine.shutdown(timeout=10)
    assert [r.error_type for r in memory.records] == ["TimeoutError"]  # type: ignore[union-attr]


def test_overflow_drop_newest_counts_every_drop(dead_letter: Path) -> None:
    gate = threading.Event()
    memory = MemorySink()
    engine = ScoringEngine(
        [gated_scorer(gate)],
        sinks=[memory],
        queue=QueueOptions(size=20),
        scoring=ScoringOptions(max_concurrency=1),
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    results = [engine.submit(run) for run in runs(500)]
    refused = results.count(False)
    assert refused > 0
    stats = engine.stats()
    assert stats.dropped == refused and stats.accepted == results.count(True)
    assert stats.queued <= 20
    gate.set()
    assert engine.shutdown(timeout=10)
    accepted_ids = {run.run_id for run, ok in zip(runs(500), results, strict=True) if ok}
    assert {r.run_id for r in memory.records} == accepted_ids
    assert engine.stats().scored == len(accepted_ids)


def test_overflow_drop_oldest_keeps_the_newest(dead_letter: Path) -> None:
    gate = threading.Event()
    memory = MemorySink()
    engine = ScoringEngine(
        [gated_scorer(gate)],
        sinks=[memory],
        queue=QueueOptions(size=20, overflow="drop_oldest"),
        scoring=ScoringOptions(max_concurrency=1),
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    assert all(engine.submit(run) for run in runs(500))
    gate.set()
    assert engine.shutdown(timeout=10)
    stats = engine.stats()
    assert stats.dropped > 0 and stats.scored == 500 - stats.dropped == len(memory.records)
    assert "run-499" in {r.run_id for r in memory.records}


def test_concurrent_submitters_from_8_threads(dead_letter: Path) -> None:
    memory = MemorySink()
    engine = ScoringEngine(
        [length_scorer()],
        sinks=[memory],
        queue=QueueOptions(size=100_000),
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    barrier = threading.Barrier(8)

    def submit_all(thread: int) -> None:
        barrier.wait()
        for run in runs(1000, prefix=f"t{thread}"):
            assert engine.submit(run)

    threads = [threading.Thread(target=submit_all, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert engine.shutdown(timeout=30)
    ids = [r.run_id for r in memory.records]
    assert len(ids) == len(set(ids)) == 8000
    stats = engine.stats()
    assert (stats.submitted, stats.accepted, stats.scored, stats.dropped) == (8000, 8000, 8000, 0)


def test_bad_input_is_counted_and_never_raises(dead_letter: Path, caplog: pytest.LogCaptureFixture) -> None:
    memory = MemorySink()
    engine = ScoringEngine(
        [length_scorer()], sinks=[memory], delivery=DeliveryOptions(dead_letter=dead_letter)
    )
    assert engine.submit("not a run") is False  # type: ignore[arg-type]
    assert engine.submit({"output": "ok", "bogus": 1}) is False  # type: ignore[arg-type]
    assert engine.submit({"run_id": "from-dict", "output": "ok"}) is True  # type: ignore[arg-type]
    assert engine.shutdown(timeout=5)
    assert engine.submit(Run(output="late")) is False  # after shutdown
    stats = engine.stats()
    assert stats.invalid == 2 and stats.submitted == 4 and stats.accepted == 1
    assert [r.run_id for r in memory.records] == ["from-dict"]
    assert "invalid run" in caplog.text


EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")


def mask_emails(record: ScoreRecord) -> ScoreRecord:
    """The documented redaction example: mask email addresses in the stored input and output."""
    return record.model_copy(
        update={
            "input": EMAIL.sub("<email>", str(record.input)),
            "output": EMAIL.sub("<email>", str(record.output)),
        }
    )


def test_redaction_masks_emails_before_every_sink(dead_letter: Path) -> None:
    first, second = MemorySink(), MemorySink()
    engine = ScoringEngine(
        [length_scorer()],
        sinks=[first, second],
        redact=mask_emails,
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    engine.submit(Run(input="reach me at ann.lee+x@example.co.uk", output="mailed bob@corp.io"))
    assert engine.shutdown(timeout=5)
    for sink in (first, second):
        (record,) = sink.records
        assert record.input == "reach me at <email>" and record.output == "mailed <email>"
        assert record.score == 1.0


def test_failing_redaction_never_forwards_the_unredacted_record(dead_letter: Path) -> None:
    def broken(record: ScoreRecord) -> ScoreRecord:
        raise KeyError("oops")

    memory = MemorySink()
    engine = ScoringEngine(
        [length_scorer()], sinks=[memory], redact=broken, delivery=DeliveryOptions(dead_letter=dead_letter)
    )
    engine.submit(Run(run_id="secret-run", input="password hunter2", output="ok"))
    assert engine.shutdown(timeout=5)
    (record,) = memory.records
    assert isinstance(record, ScoreFailure) and record.error_type == "RedactionError"
    assert record.run_id == "secret-run" and record.input is None and record.output is None


def test_scorer_config_shapes_and_errors() -> None:
    s = length_scorer("short")
    engine = ScoringEngine(
        {"plain": s, "entry": {"scorer": s, "sampling": {"type": "none"}, "timeout": 2.0}},
        sinks=[],
    )
    assert engine.scorer_ids == ["plain", "entry"]
    engine.shutdown(timeout=5)
    listed = ScoringEngine([s, ScorerEntry(scorer=s.with_id("other"))], sinks=[])
    assert listed.scorer_ids == ["short", "other"]
    listed.shutdown(timeout=5)
    with pytest.raises(ValueError, match="share the id"):
        ScoringEngine([s, s], sinks=[])
    with pytest.raises(ValueError, match="unknown scorer entry key"):
        ScoringEngine({"x": {"scorer": s, "rate": 0.5}}, sinks=[])
    with pytest.raises(TypeError, match="Scorer"):
        ScoringEngine({"x": "not a scorer"}, sinks=[])
    with pytest.raises(ValueError, match=r"QueueOptions\.overflow"):
        ScoringEngine([s], sinks=[], queue=QueueOptions(overflow="block"))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"QueueOptions\.size"):
        ScoringEngine([s], sinks=[], queue=QueueOptions(size=0))
    with pytest.raises(TypeError, match="not a sink"):
        ScoringEngine([s], sinks=[42])  # type: ignore[list-item]


def test_dict_key_becomes_the_record_scorer_id_and_entity_defaults(dead_letter: Path) -> None:
    memory = MemorySink()
    engine = ScoringEngine(
        {"brevity": length_scorer("short")},
        sinks=[memory],
        entity="support-bot",
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    engine.submit(Run(output="x"))
    engine.submit(Run(output="y", entity="billing-bot"))
    assert engine.shutdown(timeout=5)
    assert {r.scorer_id for r in memory.records} == {"brevity"}
    assert sorted(str(r.entity) for r in memory.records) == ["billing-bot", "support-bot"]


def test_default_sink_is_logging_and_a_plain_callable_is_wrapped(dead_letter: Path) -> None:
    engine = ScoringEngine([length_scorer()], delivery=DeliveryOptions(dead_letter=dead_letter))
    assert [type(s) for s in engine.sinks] == [LoggingSink]
    engine.shutdown(timeout=5)
    seen: list[ScoreRecord] = []
    engine = ScoringEngine(
        [length_scorer()], sinks=[seen.append], delivery=DeliveryOptions(dead_letter=dead_letter)
    )
    engine.submit(Run(output="x"))
    assert engine.shutdown(timeout=5)
    assert len(seen) == 1 and seen[0].score == 1.0


async def test_aflush_from_a_running_loop_and_stats(dead_letter: Path) -> None:
    memory = MemorySink()
    engine = ScoringEngine(
        [length_scorer()],
        sinks=[memory],
        queue=QueueOptions(linger=10.0),
        delivery=DeliveryOptions(dead_letter=dead_letter, linger=10.0),
    )
    for run in runs(10):
        engine.submit(run)
    assert await engine.aflush(timeout=5)  # flush skips the 10 s linger
    assert len(memory.records) == 10
    stats = engine.stats()
    assert stats.queued == 0 and stats.latency_ms_p50 is not None
    assert stats.latency_ms_p50 <= stats.latency_ms_p95 <= stats.latency_ms_p99  # type: ignore[operator]
    assert await engine.ashutdown(timeout=5)
    assert await engine.ashutdown(timeout=5)  # idempotent


def test_per_scorer_concurrency_limit(dead_letter: Path) -> None:
    active = 0
    peak = 0

    async def track(run: Run) -> float:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.002)
        active -= 1
        return 1.0

    engine = ScoringEngine(
        {"t": ScorerEntry(scorer=create_scorer(id="t").generate_score(track), max_concurrency=2)},
        sinks=[],
        scoring=ScoringOptions(max_concurrency=16),
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    for run in runs(60):
        engine.submit(run)
    assert engine.shutdown(timeout=10)
    assert engine.stats().scored == 60 and peak == 2


def test_nothing_scored_stays_alive_once_flushed(dead_letter: Path) -> None:
    """A flushed engine holds no run and no record: the last ones are not kept until the next batch."""
    seen: list[weakref.ref[Any]] = []

    def remember(run: Run) -> float:
        seen.append(weakref.ref(run))
        return 1.0

    class WeakSink:
        async def write(self, records: list[ScoreRecord]) -> None:
            seen.extend(weakref.ref(r) for r in records)

        async def close(self) -> None:
            return None

    engine = ScoringEngine(
        create_scorer(id="remember").generate_score(remember),
        sinks=[WeakSink()],
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    try:
        for run in runs(3):
            assert engine.submit(run)
        del run
        assert engine.flush(timeout=10)
        gc.collect()
        assert len(seen) == 6  # three runs, three records
        assert [ref() for ref in seen] == [None] * 6
    finally:
        engine.shutdown(timeout=10)
