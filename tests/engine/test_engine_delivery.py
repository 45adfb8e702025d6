"""Nothing accepted is lost: sink retries, dead-letter + replay, flush at shutdown and at exit."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from engine_helpers import FAST_RETRY, length_scorer, runs

from agentevals import ScoreRecord, ScoringEngine
from agentevals.engine import DeliveryOptions
from agentevals.sinks import MemorySink, RetryPolicy, SQLiteSink, replay


class FlakySink:
    """Fails its first ``failures`` writes, then stores everything."""

    name = "flaky"

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0
        self.records: list[ScoreRecord] = []

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise ConnectionError(f"store unavailable (call {self.calls})")
        self.records.extend(records)

    async def close(self) -> None:
        return None


def _count(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM agentevals_scores").fetchone()[0])


def test_sink_failing_3_times_then_recovering_loses_nothing(dead_letter: Path) -> None:
    flaky, memory = FlakySink(failures=3), MemorySink()
    engine = ScoringEngine(
        [length_scorer()],
        sinks=[flaky, memory],
        delivery=DeliveryOptions(retry=FAST_RETRY, dead_letter=dead_letter),
    )
    for run in runs(300):
        engine.submit(run)
    assert engine.shutdown(timeout=20)
    assert sorted(r.run_id for r in flaky.records) == sorted(r.run_id for r in memory.records)
    assert len(flaky.records) == 300
    stats = engine.stats()
    assert (stats.sink_errors, stats.dead_lettered, stats.lost) == (3, 0, 0)
    assert not dead_letter.exists()


def test_sink_that_never_recovers_goes_to_dead_letter_and_replay_restores_it(
    dead_letter: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken, memory = FlakySink(failures=10**9), MemorySink()
    engine = ScoringEngine(
        [length_scorer(), length_scorer("other")],
        sinks=[broken, memory],
        delivery=DeliveryOptions(retry=FAST_RETRY, dead_letter=dead_letter, batch_size=64),
    )
    for run in runs(200):
        engine.submit(run)
    report = engine.shutdown(timeout=20)
    assert not report and report.completed  # settled, but with dead letters: not a clean shutdown
    assert (report.scored, report.written, report.dead_lettered) == (400, 400, 400)
    assert len(memory.records) == 400  # the healthy sink is unaffected
    stats = engine.stats()
    assert stats.dead_lettered == 400 and stats.lost == 0 and stats.sink_errors >= 5
    lines = [json.loads(line) for line in dead_letter.read_text().splitlines()]
    assert len(lines) == 400
    assert {line["sink"] for line in lines} == {"flaky"}
    assert lines[0]["error"].startswith("ConnectionError: store unavailable")
    assert str(dead_letter.resolve()) in caplog.text

    # A still-broken target keeps every line; a healthy one takes them all and empties the file.
    assert replay(dead_letter, FlakySink(failures=10**9)) == 0
    assert len(dead_letter.read_text().splitlines()) == 400
    db = tmp_path / "replayed.db"
    assert replay(dead_letter, SQLiteSink(db)) == 400
    assert not dead_letter.exists()
    assert _count(db) == 400
    with sqlite3.connect(db) as conn:
        replayed = set(conn.execute("SELECT run_id, scorer_id, score, source FROM agentevals_scores"))
    assert replayed == {(r.run_id, r.scorer_id, r.score, "live") for r in memory.records}


def test_replay_keeps_the_lines_of_a_batch_the_sink_rejects(dead_letter: Path) -> None:
    broken = FlakySink(failures=10**9)
    engine = ScoringEngine(
        [length_scorer()], sinks=[broken], delivery=DeliveryOptions(retry=FAST_RETRY, dead_letter=dead_letter)
    )
    for run in runs(30):
        engine.submit(run)
    report = engine.shutdown(timeout=20)
    assert report.completed and report.dead_lettered == 30 and not report
    half_broken = FlakySink(failures=1)  # first batch fails, later batches succeed
    assert replay(dead_letter, MemorySink(), batch_size=10, only_sink="elsewhere") == 0
    assert replay(dead_letter, half_broken, batch_size=10) == 0  # replay stops at the first failure
    assert replay(dead_letter, half_broken, batch_size=10) == 30
    assert not dead_letter.exists()


def test_shutdown_flushes_5000_queued_runs_to_sqlite(tmp_path: Path, dead_letter: Path) -> None:
    db = tmp_path / "scores.db"
    engine = ScoringEngine(
        [length_scorer()], sinks=[SQLiteSink(db)], delivery=DeliveryOptions(dead_letter=dead_letter)
    )
    assert all(engine.submit(run) for run in runs(5000))
    assert engine.shutdown(timeout=30)
    assert _count(db) == 5000
    stats = engine.stats()
    assert (stats.scored, stats.queued, stats.dead_lettered) == (5000, 0, 0)


def test_normal_interpreter_exit_flushes_what_was_accepted(tmp_path: Path) -> None:
    db = tmp_path / "exit.db"
    script = textwrap.dedent(
        f"""
        from agentevals import Run, ScoringEngine, create_scorer
        from agentevals.engine import DeliveryOptions
        from agentevals.sinks import SQLiteSink
        scorer = create_scorer(id="short").generate_score(lambda run, **_: 1.0)
        engine = ScoringEngine([scorer], sinks=[SQLiteSink({str(db)!r})],
                               delivery=DeliveryOptions(dead_letter={str(tmp_path / "dl.jsonl")!r}))
        for i in range(3000):
            assert engine.submit(Run(run_id=f"r{{i}}", output="x"))
        # no flush, no shutdown: the atexit hook must write everything
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60, cwd=tmp_path)
    assert _count(db) == 3000


class HangingSink:
    name = "hanging"

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        await asyncio.sleep(3600)

    async def close(self) -> None:
        return None


def test_a_hung_sink_times_out_and_never_starves_the_others(dead_letter: Path) -> None:
    memory = MemorySink()
    engine = ScoringEngine(
        [length_scorer()],
        sinks=[HangingSink(), memory],
        delivery=DeliveryOptions(
            retry=RetryPolicy(attempts=2, initial=0.001, max_wait=0.001, timeout=0.05),
            buffer=10,
            batch_size=5,
            dead_letter=dead_letter,
        ),
    )
    for run in runs(40):
        engine.submit(run)
    report = engine.shutdown(timeout=30)
    assert report.completed and (report.written, report.dead_lettered) == (40, 40)
    assert len(memory.records) == 40
    stats = engine.stats()
    assert stats.dead_lettered == 40
    assert stats.sink_errors >= 2 * 8 and stats.sink_errors % 2 == 0  # 2 timed-out attempts per batch
    assert len(dead_letter.read_text().splitlines()) == 40


class SlowSink:
    name = "slow"

    def __init__(self) -> None:
        self.records: list[ScoreRecord] = []

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        await asyncio.sleep(0.005)
        self.records.extend(records)

    async def close(self) -> None:
        return None


def test_a_full_sink_buffer_holds_back_inline_scoring_and_loses_nothing(dead_letter: Path) -> None:
    slow = SlowSink()
    engine = ScoringEngine(
        [length_scorer()],
        sinks=[slow],
        delivery=DeliveryOptions(buffer=4, batch_size=2, dead_letter=dead_letter),
    )
    submitted = runs(60)
    for run in submitted:
        assert engine.submit(run)
    assert engine.flush(timeout=30)  # returns only once the backpressured records are written too
    assert sorted(r.run_id for r in slow.records) == sorted(r.run_id for r in submitted)
    stats = engine.stats()
    assert (stats.scored, stats.dead_lettered, stats.lost) == (60, 0, 0)
    assert engine.shutdown()


@pytest.mark.parametrize("with_sink", [True, False])
def test_flush_is_woken_when_the_work_is_done_not_by_polling(
    monkeypatch: pytest.MonkeyPatch, dead_letter: Path, with_sink: bool
) -> None:
    # With the safety poll and the flush timeout both pushed out of reach, only the wake-up that the
    # last finished record sends can end the wait: without it flush() would hang (the join guards that).
    monkeypatch.setattr("agentevals._engine._lifecycle._SETTLE_POLL", 10_000.0)
    memory = MemorySink()
    engine = ScoringEngine(
        [length_scorer(), length_scorer("second")],
        sinks=[memory] if with_sink else [],
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    outcomes: list[bool] = []

    def submit_and_flush_twice() -> None:
        for run in runs(30):
            engine.submit(run)
        outcomes.append(engine.flush(timeout=10_000))
        outcomes.append(engine.flush(timeout=10_000))  # nothing left: returns at once too

    flusher = threading.Thread(target=submit_and_flush_twice, daemon=True)
    flusher.start()
    flusher.join(30)
    assert not flusher.is_alive(), "flush() was never woken when the engine became idle"
    assert [bool(o) for o in outcomes] == [True, True]
    assert engine.stats().scored == 60
    assert len(memory.records) == (60 if with_sink else 0)
    engine.shutdown()
