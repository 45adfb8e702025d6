"""The store's schema is version 2 (with the labels table), recorded in ``agentevals_meta``: a new store
records it and opens again; a store a development version wrote (its tables built here by hand, with or
without its own schema table, whatever version that says) or a newer release wrote is refused, with what
was found and how to keep its records, and left as it was. SQLite (a real file) and PostgreSQL (the real
server)."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentevals import ScoreResult
from agentevals._store._store import open_store
from agentevals.sinks import PostgresSink, SinkConfigError, SQLiteSink

#: How development versions laid a store out, by hand: the scores table alone, or scores and runs
#: with their own schema table (at version 1, which must not pass for this release's version 1, or 4).
DEV_LAYOUTS = {
    "one table": [
        "CREATE TABLE {t} (id TEXT, created_at TEXT, scorer_id TEXT, run_id TEXT, score REAL, input TEXT)",
    ],
    "schema table at 1": [
        "CREATE TABLE {t} (id TEXT PRIMARY KEY, created_at TEXT, run_id TEXT, scorer_id TEXT, outcome TEXT)",
        "CREATE TABLE {base}_runs (run_id TEXT PRIMARY KEY, created_at TEXT)",
        "CREATE TABLE {base}_schema (version INTEGER PRIMARY KEY, applied_at TEXT)",
        "INSERT INTO {base}_schema VALUES (1, NULL)",
    ],
    "schema table at 4": [
        "CREATE TABLE {t} (id TEXT PRIMARY KEY, created_at TEXT, run_id TEXT, scorer_id TEXT, outcome TEXT)",
        "CREATE TABLE {base}_runs (run_id TEXT PRIMARY KEY, created_at TEXT)",
        "CREATE TABLE {base}_schema (version INTEGER PRIMARY KEY, applied_at TEXT)",
        "INSERT INTO {base}_schema VALUES (4, NULL)",
    ],
}


def _record() -> ScoreResult:
    return ScoreResult(scorer_id="s", scorer_name="S", run_id="r1", score=1.0, source="live")


def _assert_refused(message: str, table: str) -> None:
    assert "was not written by this release of agentevals" in message
    assert f"it has {table}" in message and "table recording its schema version" in message  # found
    assert "agentevals export --db STORE --format jsonl" in message  # how to keep the records
    assert "delete the store or pass another path or table=" in message


# -- SQLite --------------------------------------------------------------------------------------------


def _sqlite_tables(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [row[0] for row in conn.execute("SELECT name FROM sqlite_master ORDER BY name")]


async def test_a_new_sqlite_store_is_version_2_and_opens_again(tmp_path: Path) -> None:
    path = tmp_path / "scores.db"
    sink = SQLiteSink(path)
    await sink.write([_record()])
    await sink.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT key, value FROM agentevals_meta").fetchall() == [("schema_version", "2")]
    SQLiteSink(path).check()
    with open_store(path) as store:
        assert [run.run_id for run in store.runs()] == ["r1"]


@pytest.mark.parametrize("layout", sorted(DEV_LAYOUTS))
def test_a_development_sqlite_store_is_refused_and_left_as_it_was(tmp_path: Path, layout: str) -> None:
    path = tmp_path / "dev.db"
    with sqlite3.connect(path) as conn:
        for statement in DEV_LAYOUTS[layout]:
            conn.execute(statement.format(t="agentevals_scores", base="agentevals"))
    before = _sqlite_tables(path)
    with pytest.raises(SinkConfigError) as refused:
        SQLiteSink(path).check()
    _assert_refused(str(refused.value), "agentevals_scores")
    assert str(path) in str(refused.value)
    with pytest.raises(ValueError) as opened:
        open_store(path)
    _assert_refused(str(opened.value), "agentevals_scores")
    assert _sqlite_tables(path) == before


def test_a_newer_sqlite_store_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "scores.db"
    SQLiteSink(path).check()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE agentevals_meta SET value = '3' WHERE key = 'schema_version'")
    with pytest.raises(SinkConfigError, match="holds schema version 3, newer than this agentevals"):
        SQLiteSink(path).check()


# -- PostgreSQL ----------------------------------------------------------------------------------------


@pytest.fixture
def pg_table(postgres: Any) -> Iterator[tuple[Any, str]]:
    import psycopg

    table = f"agentevals_schema_{uuid.uuid4().hex[:12]}"
    yield postgres, table
    suffixes = (
        "",
        "_runs",
        "_meta",
        "_schema",
        "_rollup",
        "_bins",
        "_versions",
        "_scorers",
        "_drops",
        "_labels",
    )
    with psycopg.connect(postgres.conninfo, autocommit=True) as conn:
        for suffix in suffixes:
            conn.execute(f"DROP TABLE IF EXISTS {table}{suffix} CASCADE")
        for name in ("rollup", "bins", "versions"):
            for event in ("insert", "update", "delete"):
                conn.execute(f"DROP FUNCTION IF EXISTS {table}_{name}_{event}()")


def _pg_tables(conninfo: str, table: str) -> list[str]:
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_name LIKE %s ORDER BY table_name",
            (f"{table}%",),
        ).fetchall()
    return [row[0] for row in rows]


async def test_a_new_postgres_store_is_version_2_and_opens_again(pg_table: tuple[Any, str]) -> None:
    import psycopg

    postgres, table = pg_table
    sink = PostgresSink(postgres.conninfo, table=table)
    await sink.write([_record()])
    await sink.close()
    with psycopg.connect(postgres.conninfo, autocommit=True) as conn:
        assert conn.execute(f"SELECT key, value FROM {table}_meta").fetchall() == [("schema_version", "2")]
    PostgresSink(postgres.conninfo, table=table).check()
    with open_store(postgres.url, table=table) as store:
        assert [run.run_id for run in store.runs()] == ["r1"]


@pytest.mark.parametrize("layout", sorted(DEV_LAYOUTS))
def test_a_development_postgres_store_is_refused_and_left_as_it_was(
    pg_table: tuple[Any, str], layout: str
) -> None:
    import psycopg

    postgres, table = pg_table
    with psycopg.connect(postgres.conninfo, autocommit=True) as conn:
        for statement in DEV_LAYOUTS[layout]:
            conn.execute(statement.format(t=table, base=table))
    before = _pg_tables(postgres.conninfo, table)
    with pytest.raises(SinkConfigError) as refused:
        PostgresSink(postgres.conninfo, table=table).check()
    _assert_refused(str(refused.value), table)
    with pytest.raises(ValueError) as opened:
        open_store(postgres.url, table=table)
    _assert_refused(str(opened.value), table)
    assert _pg_tables(postgres.conninfo, table) == before
