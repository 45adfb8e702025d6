"""Reads of a store: one SQL text for SQLite and PostgreSQL, parallel reads each on a connection of
their own, and a damaged file as a usage error."""

from __future__ import annotations

import sqlite3
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from agentevals import ScoreResult
from agentevals._store._dialect import POSTGRES, SQLITE
from agentevals._store._reading import Reading, parallel
from agentevals._store._row import tables
from agentevals._store._schema_check import store_tables
from agentevals._store._store import open_store
from agentevals.sinks import PostgresSink, SQLiteSink


def test_the_postgres_dialect_escapes_percent_signs_and_changes_only_the_placeholders() -> None:
    sql = "SELECT reason FROM s WHERE run_id = ? AND reason LIKE 'a%'"
    assert SQLITE.sql(sql) == sql
    assert POSTGRES.sql(sql) == "SELECT reason FROM s WHERE run_id = %s AND reason LIKE 'a%%'"


def test_parallel_reads_run_each_job_on_a_session_of_its_own_in_order() -> None:
    opened: list[Reading] = []
    lock = threading.Lock()

    @contextmanager
    def session() -> Iterator[Reading]:
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        reading = Reading(conn, SQLITE, tables("agentevals_scores"), "memory")
        with lock:
            opened.append(reading)
        try:
            yield reading
        finally:
            conn.close()

    jobs = [lambda q, n=n: (n, id(q), q.rows("SELECT ?", [n])[0][0]) for n in range(6)]
    results = parallel(jobs, session, threads=3)
    assert [(n, value) for n, _, value in results] == [(n, n) for n in range(6)]
    assert len({reading for _, reading, _ in results}) == len(opened) == 6
    assert parallel(jobs[:1], session, threads=1)[0][0] == 0


@pytest.fixture(params=["sqlite", "postgres"])
async def address(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """``(address, table)`` of a store holding one record, on SQLite or on PostgreSQL."""
    table = f"agentevals_test_{uuid.uuid4().hex[:12]}"
    if request.param == "sqlite":
        where: str = str(tmp_path / "s.db")
        sink: Any = SQLiteSink(where, table=table)
    else:
        where = request.getfixturevalue("postgres").url
        sink = PostgresSink(where, table=table)
    await sink.write([ScoreResult(scorer_id="a", scorer_name="a", run_id="r", score=0.5, reason="50% right")])
    await sink.close()
    yield where, table
    if request.param == "postgres":
        import psycopg

        async with await psycopg.AsyncConnection.connect(where, autocommit=True) as conn:
            for name in store_tables(tables(table)):
                await conn.execute(f"DROP TABLE IF EXISTS {name} CASCADE")


def test_a_store_reads_the_same_sql_on_both_databases(address: tuple[str, str]) -> None:
    where, table = address
    like = f"SELECT score FROM {table} WHERE run_id = ? AND reason LIKE '%right'"
    with open_store(where, table=table) as store:
        assert store.reading.rows(like, ["r"]) == [(0.5,)]
        with store.session() as other:
            assert other.conn is not store.connection
            assert other.rows(like, ["r"]) == [(0.5,)]
            assert other.has_table(store.tables.rollup)
            assert not other.has_table(f"{table}_missing")


def test_a_damaged_file_is_a_usage_error_naming_the_store(tmp_path: Path) -> None:
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    conn = sqlite3.connect(broken)
    try:
        reading = Reading(conn, SQLITE, tables("agentevals_scores"), str(broken))
        with pytest.raises(ValueError, match=r"broken\.db' cannot be read as an agentevals store"):
            reading.rows("SELECT COUNT(*) FROM agentevals_scores")
    finally:
        conn.close()
