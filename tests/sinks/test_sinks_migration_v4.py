"""Schema version 4: a version-3 store (a real file written by the version-3 SQLiteSink, and a PostgreSQL
table of version 3's shape) is migrated in place: every row kept, the ``judge_replies`` column and the
scorers and drops tables added, and the sinks then store scorers, drop counts and replies in it."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentevals import ScoreResult
from agentevals._evals._catalog import dropped_counts, dropped_runs, stored_scorers, stored_thresholds
from agentevals._evals._config import Threshold
from agentevals._evals._report import build_report
from agentevals._store import open_store
from agentevals.sinks import PostgresSink, SQLiteSink
from agentevals.sinks._catalog_tables import DropCount, ScorerInfo
from agentevals.sinks._row import SCHEMA_VERSION

#: Written by the version-3 SQLiteSink (6 "answer" scores, a failed and a skipped "tone" row, 6 runs).
V3_STORE = Path(__file__).parent / "data" / "v3_store.db"

SCORERS = [
    ScorerInfo("answer", "Answer", "v1", "live", threshold_min=0.6),
    ScorerInfo("tone", "Tone", "v1", "live", threshold_max=0.3),
]
DROPS = [
    DropCount("2026-11-24T10", "bot", "", "overflow", 3),
    DropCount("2026-11-24T10", "bot", "answer", "overflow", 3),
    DropCount("2026-11-24T10", "bot", "tone", "overflow", 1),
]


def _replied() -> ScoreResult:
    return ScoreResult(
        scorer_id="answer",
        scorer_name="Answer",
        scorer_version="v2",
        run_id="run-new",
        score=0.9,
        entity="bot",
        source="live",
        judge_replies={"generate_score": '{"score": 0.9}'},
    )


def _sqlite_rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


async def test_a_real_version_3_sqlite_file_is_migrated_in_place(tmp_path: Path) -> None:
    db = tmp_path / "v3.db"
    shutil.copy(V3_STORE, db)
    assert _sqlite_rows(db, "SELECT MAX(version) FROM agentevals_schema") == [(3,)]
    before = _sqlite_rows(
        db, "SELECT id, run_id, scorer_id, outcome, score FROM agentevals_scores ORDER BY id"
    )
    runs_before = _sqlite_rows(db, "SELECT * FROM agentevals_runs ORDER BY run_id")
    rollup_before = _sqlite_rows(db, "SELECT * FROM agentevals_rollup ORDER BY 1, 2, 3, 4, 5, 6, 7")
    assert len(before) == 8 and len(runs_before) == 6

    sink = SQLiteSink(db)
    sink.check()  # migrates
    await sink.write_scorers(SCORERS)
    await sink.write_drops(DROPS)
    await sink.write_drops(DROPS[:2])  # counts add up
    await sink.write([_replied()])
    await sink.close()

    assert _sqlite_rows(db, "SELECT MAX(version) FROM agentevals_schema") == [(SCHEMA_VERSION,)]
    after = _sqlite_rows(
        db, "SELECT id, run_id, scorer_id, outcome, score FROM agentevals_scores ORDER BY id"
    )
    assert [row for row in after if row[1] != "run-new"] == before
    assert _sqlite_rows(db, "SELECT * FROM agentevals_runs WHERE run_id != 'run-new' ORDER BY run_id") == (
        runs_before
    )
    old_replies = _sqlite_rows(db, "SELECT judge_replies FROM agentevals_scores WHERE run_id != 'run-new'")
    assert old_replies == [(None,)] * 8
    replies = _sqlite_rows(db, "SELECT judge_replies FROM agentevals_scores WHERE run_id = 'run-new'")
    assert replies == [('{"generate_score":"{\\"score\\": 0.9}"}',)]
    rollup = _sqlite_rows(
        db, "SELECT * FROM agentevals_rollup WHERE scorer_id = 'tone' ORDER BY 1, 2, 3, 4, 5"
    )
    assert rollup == [r for r in rollup_before if r[2] == "tone"]  # kept, not rebuilt or doubled

    with open_store(db) as store:
        assert stored_thresholds(store) == {"answer": Threshold(min=0.6), "tone": Threshold(max=0.3)}
        assert dropped_counts(store) == {"answer": 6, "tone": 1}
        assert dropped_runs(store) == 6
        assert {s.scorer_id: s.scorer_version for s in stored_scorers(store)} == {
            "answer": "v1",
            "tone": "v1",
        }
    report = build_report(db)
    assert {c.scorer_id: c.dropped for c in report.coverage} == {"answer": 6, "tone": 1}


def test_a_version_3_store_opened_for_reading_is_migrated_and_reads_empty(tmp_path: Path) -> None:
    db = tmp_path / "v3.db"
    shutil.copy(V3_STORE, db)
    with open_store(db, read_only=True) as store:
        assert (stored_thresholds(store), dropped_counts(store), dropped_runs(store)) == ({}, {}, 0)
    assert _sqlite_rows(db, "SELECT MAX(version) FROM agentevals_schema") == [(SCHEMA_VERSION,)]
    report = build_report(db)
    assert report.total == 8 and all(c.dropped == 0 for c in report.coverage)


def test_a_store_without_the_catalog_tables_reads_empty(tmp_path: Path) -> None:
    db = tmp_path / "v4.db"
    SQLiteSink(db).check()
    with sqlite3.connect(db) as conn:  # as if dropped by hand: the readers must not fail
        conn.execute("DROP TABLE agentevals_scorers")
        conn.execute("DROP TABLE agentevals_drops")
    with open_store(db) as store:
        assert (stored_thresholds(store), dropped_counts(store), dropped_runs(store)) == ({}, {}, 0)


# -- PostgreSQL -------------------------------------------------------------------------------------


@pytest.fixture
async def pg_table(postgres: Any) -> AsyncIterator[tuple[str, str]]:
    import psycopg

    table = f"agentevals_v4_{uuid.uuid4().hex[:12]}"
    yield postgres.conninfo, table
    async with await psycopg.AsyncConnection.connect(postgres.conninfo, autocommit=True) as conn:
        for suffix in ("", "_runs", "_schema", "_rollup", "_bins", "_scorers", "_drops"):
            await conn.execute(f"DROP TABLE IF EXISTS {table}{suffix}")
        for name in ("rollup", "bins"):
            for event in ("insert", "update", "delete"):
                await conn.execute(f"DROP FUNCTION IF EXISTS {table}_{name}_{event}()")


async def _pg(conninfo: str, sql: str) -> list[tuple[Any, ...]]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        cursor = await conn.execute(sql)
        return await cursor.fetchall() if cursor.description else []


def _records(n: int) -> list[ScoreResult]:
    return [
        ScoreResult(scorer_id="answer", scorer_name="Answer", run_id=f"run-{i}", score=i / n, source="live")
        for i in range(n)
    ]


async def test_a_version_3_postgres_table_is_migrated_in_place(
    pg_table: tuple[str, str], postgres: Any
) -> None:
    conninfo, table = pg_table
    sink = PostgresSink(conninfo, table=table)
    await sink.write(_records(20))
    await sink.close()
    # What version 3 had: no judge_replies column, no scorers or drops table.
    await _pg(conninfo, f"ALTER TABLE {table} DROP COLUMN judge_replies")
    await _pg(conninfo, f"DROP TABLE {table}_scorers")
    await _pg(conninfo, f"DROP TABLE {table}_drops")
    await _pg(conninfo, f"UPDATE {table}_schema SET version = 3")
    before = await _pg(conninfo, f"SELECT id, run_id, score FROM {table} ORDER BY id")
    rollup_before = await _pg(conninfo, f"SELECT * FROM {table}_rollup ORDER BY 1, 2, 3, 4, 5, 6, 7")

    sink = PostgresSink(conninfo, table=table)
    await asyncio.to_thread(sink.check)  # migrates
    await sink.write_scorers(SCORERS)
    await sink.write_scorers([ScorerInfo("answer", "Answer", "v1", "live", threshold_min=0.8)])  # replaces
    await sink.write_drops(DROPS)
    await sink.write_drops(DROPS)
    await sink.write([_replied()])
    await sink.close()

    assert await _pg(conninfo, f"SELECT MAX(version) FROM {table}_schema") == [(SCHEMA_VERSION,)]
    after = await _pg(
        conninfo, f"SELECT id, run_id, score FROM {table} WHERE run_id != 'run-new' ORDER BY id"
    )
    assert after == before
    rollup = await _pg(
        conninfo, f"SELECT * FROM {table}_rollup WHERE scorer_id = 'answer' ORDER BY 1, 2, 3, 4, 5, 6, 7"
    )
    assert sum(r[7] for r in rollup) == sum(r[7] for r in rollup_before) + 1  # kept, plus the new row
    replies = await _pg(conninfo, f"SELECT judge_replies FROM {table} WHERE run_id = 'run-new'")
    assert replies == [({"generate_score": '{"score": 0.9}'},)]
    with open_store(postgres.url, table=table) as store:
        assert stored_thresholds(store) == {"answer": Threshold(min=0.8), "tone": Threshold(max=0.3)}
        assert dropped_counts(store) == {"answer": 6, "tone": 2}
        assert dropped_runs(store) == 6
        assert dropped_counts(store, entity="other") == {}
    report = await asyncio.to_thread(build_report, postgres.url, table=table)
    assert {c.scorer_id: c.dropped for c in report.coverage} == {"answer": 6, "tone": 2}
