"""The engine stores what the viewer needs beside the records: each scorer's threshold when it starts,
and the runs it drops (per hour, entity, sampled scorer and reason), in the SQL sinks' tables."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import FAST_RETRY, accounted, gated_scorer, length_scorer

from agentevals import Run, ScoringEngine
from agentevals._engine._drops import DropLedger
from agentevals._engine._options import Overflow
from agentevals._evals._catalog import dropped_counts, dropped_runs, stored_scorers, stored_thresholds
from agentevals._model._thresholds import Threshold
from agentevals._store._catalog_tables import DropCount, ScorerInfo
from agentevals._store._row import tables
from agentevals._store._schema_check import store_tables
from agentevals._store._store import open_store
from agentevals.engine import DeliveryOptions, ExitOptions, QueueOptions, ScoringOptions
from agentevals.sinks import MemorySink, PostgresSink, SQLiteSink


def _even(run: Run) -> bool:
    return int(run.metadata["i"]) % 2 == 0


def _run(i: int) -> Run:
    return Run(run_id=f"run-{i}", input=f"q {i}", output="a", entity=f"bot-{i % 2}", metadata={"i": i})


def _engine(
    db: Path, gate: threading.Event, dead_letter: Path, overflow: Overflow = "drop_newest"
) -> ScoringEngine:
    scorers = {
        "a": {"scorer": gated_scorer(gate, "a"), "threshold": 0.7},
        "b": {"scorer": length_scorer("b"), "sampling": _even, "threshold": {"max": 0.5}},
    }
    return ScoringEngine(
        scorers,
        sinks=[SQLiteSink(db), MemorySink()],  # MemorySink keeps neither: it is left alone
        queue=QueueOptions(size=3, overflow=overflow, linger=0.0),
        scoring=ScoringOptions(max_concurrency=1),
        delivery=DeliveryOptions(linger=0.0, dead_letter=dead_letter, retry=FAST_RETRY),
        exit=ExitOptions(handle_sigterm=False),
    )


def test_runs_refused_by_a_full_queue_are_stored_per_scorer_entity_and_reason(
    tmp_path: Path, dead_letter: Path
) -> None:
    db, gate = tmp_path / "s.db", threading.Event()
    engine = _engine(db, gate, dead_letter)
    accepted = [engine.submit(_run(i)) for i in range(60)]
    gate.set()
    assert engine.flush(timeout=30)
    stats = accounted(engine)
    engine.shutdown()
    dropped = [i for i, ok in enumerate(accepted) if not ok]
    assert dropped and stats.dropped_overflow == len(dropped)

    with open_store(db) as store:
        assert dropped_runs(store) == len(dropped) == dropped_runs(store, reason="overflow")
        expected = {"a": len(dropped), "b": sum(1 for i in dropped if i % 2 == 0)}
        assert dropped_counts(store) == {k: n for k, n in expected.items() if n}
        for entity in ("bot-0", "bot-1"):
            mine = [i for i in dropped if f"bot-{i % 2}" == entity]
            assert dropped_runs(store, entity=entity) == len(mine)
        assert dropped_runs(store, reason="evicted") == 0
        later = datetime.now(UTC).replace(year=datetime.now(UTC).year + 1)
        assert dropped_runs(store, since=later) == 0  # counted under the current hour
        assert stored_thresholds(store) == {"a": Threshold(min=0.7), "b": Threshold(max=0.5)}
        live = stored_scorers(store, source="live")
        assert {(s.scorer_id, s.scorer_version) for s in live} == {
            ("a", gated_scorer(gate, "a").version),
            ("b", length_scorer("b").version),
        }


def test_runs_evicted_by_newer_ones_are_stored(tmp_path: Path, dead_letter: Path) -> None:
    db, gate = tmp_path / "s.db", threading.Event()
    engine = _engine(db, gate, dead_letter, "drop_oldest")
    assert all(engine.submit(_run(i)) for i in range(60))  # each accepted; older ones pushed out
    gate.set()
    assert engine.flush(timeout=30)
    stats = accounted(engine)
    engine.shutdown()
    assert stats.dropped_evicted > 0
    with open_store(db) as store:
        assert dropped_runs(store) == stats.dropped_evicted == dropped_runs(store, reason="evicted")
        assert dropped_counts(store)["a"] == stats.dropped_evicted


def test_no_drops_no_rows_and_thresholds_are_optional(tmp_path: Path, dead_letter: Path) -> None:
    db = tmp_path / "s.db"
    engine = ScoringEngine(
        [length_scorer("plain")],
        sinks=[SQLiteSink(db)],
        delivery=DeliveryOptions(dead_letter=dead_letter),
        exit=ExitOptions(handle_sigterm=False),
    )
    engine.submit(_run(1))
    assert engine.shutdown()
    with open_store(db) as store:
        assert (dropped_counts(store), dropped_runs(store), stored_thresholds(store)) == ({}, 0, {})
        assert [(s.scorer_id, s.threshold) for s in stored_scorers(store)] == [("plain", None)]


class CatalogFails(MemorySink):
    """Takes records, but storing scorers and drops always fails."""

    name = "catalog-fails"

    async def write_scorers(self, scorers: Sequence[ScorerInfo]) -> None:
        raise ConnectionError("scorers table unavailable")

    async def write_drops(self, drops: Sequence[DropCount]) -> None:
        raise ConnectionError("drops table unavailable")


def test_a_sink_failing_to_store_them_costs_no_record_and_no_other_sink(
    tmp_path: Path, dead_letter: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db, gate, failing = tmp_path / "s.db", threading.Event(), CatalogFails()
    engine = ScoringEngine(
        {"a": {"scorer": gated_scorer(gate, "a"), "threshold": 0.5}},
        sinks=[failing, SQLiteSink(db)],
        queue=QueueOptions(size=2, linger=0.0),
        scoring=ScoringOptions(max_concurrency=1),
        delivery=DeliveryOptions(linger=0.0, dead_letter=dead_letter, retry=FAST_RETRY),
        exit=ExitOptions(handle_sigterm=False),
    )
    with caplog.at_level(logging.ERROR, logger="agentevals.engine"):
        accepted = [engine.submit(_run(i)) for i in range(30)]
        gate.set()
        report = engine.flush(timeout=30)
        stats = accounted(engine)
        engine.shutdown()
    assert report and stats.written == {"catalog-fails": stats.records, "sqlite": stats.records}
    assert len(failing.records) == accepted.count(True)
    assert "could not store" in caplog.text and stats.sink_errors >= FAST_RETRY.attempts
    with open_store(db) as store:
        assert dropped_runs(store) == accepted.count(False) == stats.dropped_overflow
        assert stored_thresholds(store) == {"a": Threshold(min=0.5)}


def test_a_bad_threshold_is_refused_at_construction(dead_letter: Path) -> None:
    with pytest.raises(ValueError, match="threshold min"):
        ScoringEngine(
            {"a": {"scorer": length_scorer("a"), "threshold": {"min": 0.9, "max": 0.1}}},
            sinks=[MemorySink()],
            delivery=DeliveryOptions(dead_letter=dead_letter),
            exit=ExitOptions(handle_sigterm=False),
        )


def test_the_ledger_counts_each_run_once_and_per_sampled_scorer() -> None:
    ledger = DropLedger()
    ledger.count("overflow", "bot", ("a", "b"))
    ledger.count("overflow", "bot", ("a",))
    ledger.count("shutdown", None, ())  # offered after shutdown, sampled for nothing
    now = datetime(2026, 11, 24, 10, 59, tzinfo=UTC)
    assert ledger.take(now) == [
        DropCount("2026-11-24T10", "", "", "shutdown", 1),
        DropCount("2026-11-24T10", "bot", "", "overflow", 2),
        DropCount("2026-11-24T10", "bot", "a", "overflow", 2),
        DropCount("2026-11-24T10", "bot", "b", "overflow", 1),
    ]
    assert ledger.take(now) == []


def test_postgres_stores_the_thresholds_and_drops_of_an_engine(postgres: Any, dead_letter: Path) -> None:
    import psycopg

    table = f"agentevals_drops_{uuid.uuid4().hex[:12]}"
    gate = threading.Event()
    try:
        engine = ScoringEngine(
            {"a": {"scorer": gated_scorer(gate, "a"), "threshold": {"min": 0.2, "max": 0.9}}},
            sinks=[PostgresSink(postgres.conninfo, table=table)],
            queue=QueueOptions(size=2, linger=0.0),
            scoring=ScoringOptions(max_concurrency=1),
            delivery=DeliveryOptions(linger=0.0, dead_letter=dead_letter, retry=FAST_RETRY),
            exit=ExitOptions(handle_sigterm=False),
        )
        accepted = [engine.submit(_run(i)) for i in range(30)]
        gate.set()
        assert engine.flush(timeout=30)
        stats = accounted(engine)
        engine.shutdown()
        with open_store(postgres.url, table=table) as store:
            assert dropped_runs(store) == accepted.count(False) == stats.dropped_overflow > 0
            assert dropped_counts(store) == {"a": stats.dropped_overflow}
            assert stored_thresholds(store) == {"a": Threshold(min=0.2, max=0.9)}
    finally:
        with psycopg.connect(postgres.conninfo, autocommit=True) as conn:
            for name in store_tables(tables(table)):
                conn.execute(f"DROP TABLE IF EXISTS {name} CASCADE")
            for name in ("rollup", "bins", "versions"):
                for event in ("insert", "update", "delete"):
                    conn.execute(f"DROP FUNCTION IF EXISTS {table}_{name}_{event}()")
