"""``on_conflict="replace"``: a record replaces the stored row of its id (same run, scorer, version) in
SQLite (a real file) and PostgreSQL (the real server on 127.0.0.1:5432); the default keeps the stored row."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sink_helpers import sample_records

from agentevals import ScoreRecord
from agentevals._store._row import record_id
from agentevals.sinks import PostgresSink, SQLiteSink


def _rescored(records: list[ScoreRecord], tag: str) -> list[ScoreRecord]:
    """The same records (same ids) with another score and reason."""
    return [r.model_copy(update={"score": 0.99, "reason": f"{tag} {r.run_id}"}) for r in records]


def _sqlite_scores(db: Path) -> dict[str, tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT id, score, reason, run_id FROM agentevals_scores").fetchall()
    return {row[0]: row[1:] for row in rows}


@pytest.mark.parametrize("rows", [3, 250])  # one bound statement; several JSON statements
async def test_sqlite_replace_updates_rows_keep_leaves_them(tmp_path: Path, rows: int) -> None:
    db = tmp_path / "scores.db"
    first = sample_records(rows)
    sink = SQLiteSink(db)
    await sink.write(first)
    await sink.write(_rescored(first, "ignored"))  # the default keeps what is stored
    await sink.close()
    before = _sqlite_scores(db)
    assert {reason for _, reason, _ in before.values()} == {r.reason for r in first}

    replacing = SQLiteSink(db, store_runs="none", on_conflict="replace")
    again = _rescored(first, "new")
    await replacing.write(again)
    await replacing.close()
    after = _sqlite_scores(db)
    assert len(after) == len(before) == len({record_id(r) for r in first})  # replaced, not added
    assert {record_id(r): (r.score, r.reason, r.run_id) for r in again} == after


async def test_sqlite_replace_within_one_batch_keeps_the_last(tmp_path: Path) -> None:
    db = tmp_path / "scores.db"
    record = sample_records(1)[0]
    sink = SQLiteSink(db, on_conflict="replace")
    await sink.write([record, *_rescored([record], "second")])
    await sink.close()
    assert _sqlite_scores(db) == {record_id(record): (0.99, f"second {record.run_id}", record.run_id)}


def test_on_conflict_is_validated() -> None:
    with pytest.raises(ValueError, match="on_conflict must be 'keep'"):
        SQLiteSink("x.db", on_conflict="update")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'replace'"):
        PostgresSink("", on_conflict="overwrite")  # type: ignore[arg-type]


@pytest.fixture
async def pg_table(postgres: Any) -> AsyncIterator[tuple[str, str]]:
    import psycopg

    table = f"agentevals_upsert_{uuid.uuid4().hex[:12]}"
    yield postgres.conninfo, table
    async with await psycopg.AsyncConnection.connect(postgres.conninfo, autocommit=True) as conn:
        for name in (table, f"{table}_runs", f"{table}_meta", f"{table}_rollup"):
            await conn.execute(f"DROP TABLE IF EXISTS {name}")


async def _pg_scores(conninfo: str, table: str) -> dict[str, tuple[Any, ...]]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(conninfo) as conn:
        cursor = await conn.execute(f"SELECT id, score, reason, run_id FROM {table}")
        return {row[0]: tuple(row[1:]) for row in await cursor.fetchall()}


@pytest.mark.parametrize("rows", [3, 250])  # under and over the COPY threshold
async def test_postgres_replace_updates_rows_keep_leaves_them(pg_table: tuple[str, str], rows: int) -> None:
    conninfo, table = pg_table
    first = sample_records(rows)
    sink = PostgresSink(conninfo, table=table)
    await sink.write(first)
    await sink.write(_rescored(first, "ignored"))
    await sink.close()
    before = await _pg_scores(conninfo, table)
    assert {reason for _, reason, _ in before.values()} == {r.reason for r in first}

    replacing = PostgresSink(conninfo, table=table, store_runs="none", on_conflict="replace")
    again = _rescored(first, "new")
    await replacing.write([*_rescored(first[:1], "overwritten in the batch"), *again])
    await replacing.close()
    after = await _pg_scores(conninfo, table)
    assert len(after) == len(before)
    assert {record_id(r): (r.score, r.reason, r.run_id) for r in again} == after


async def test_process_writer_keeps_replaces_and_reports_failures(tmp_path: Path) -> None:
    from agentevals.sinks._sqlite_process import SQLiteProcessWriter

    db = tmp_path / "scores.db"
    SQLiteSink(db).check()  # the store exists, as open_store leaves it
    first = sample_records(250)
    keeping = SQLiteProcessWriter(db, table="agentevals_scores")
    await keeping.write(first)
    await keeping.write(_rescored(first, "ignored"))
    await keeping.close()
    assert {reason for _, reason, _ in _sqlite_scores(db).values()} == {r.reason for r in first}

    replacing = SQLiteProcessWriter(db, table="agentevals_scores", replace=True)
    again = _rescored(first, "new")
    await replacing.write(again)
    assert _sqlite_scores(db) == {record_id(r): (r.score, r.reason, r.run_id) for r in again}
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE agentevals_scores RENAME TO moved")
    with pytest.raises(RuntimeError, match="the batch was not written: OperationalError: no such table"):
        await replacing.write(first[:3])
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE moved RENAME TO agentevals_scores")
    await replacing.write(_rescored(first[:1], "after the failure"))  # the writer goes on
    await replacing.close()
    assert _sqlite_scores(db)[record_id(first[0])][1] == f"after the failure {first[0].run_id}"
