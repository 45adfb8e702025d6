"""The PostgreSQL store's schema: the columns of the SQLite store (JSONB, TIMESTAMPTZ), created on first
use, upgraded in place from version 1, refused when it is neither (see ``_schema_check``)."""

from __future__ import annotations

from typing import Any

from agentevals._store import _bins, _catalog_tables, _labels, _rollup, _versions
from agentevals._store._dialect import POSTGRES
from agentevals._store._row import (
    INDEXES,
    RUN_INDEXES,
    RUN_SCHEMA,
    SCHEMA,
    SCHEMA_VERSION,
    SCHEMA_VERSION_KEY,
    Tables,
    tables,
)
from agentevals._store._schema_check import refusal, store_tables


def create_sql(t: Tables) -> str:
    """The ``CREATE TABLE`` / ``CREATE INDEX`` statements of the meta, scores, runs, scorers, drops and
    labels tables (idempotent; the rollup, histogram and versions table are added apart)."""
    types = POSTGRES.column_types
    scores = ",\n  ".join(
        f"{name} {types[kind]}{' PRIMARY KEY' if name == 'id' else ''}" for name, kind in SCHEMA
    )
    runs = ",\n  ".join(
        f"{name} {types[kind]}{' PRIMARY KEY' if name == 'run_id' else ''}" for name, kind in RUN_SCHEMA
    )
    return ";\n".join(
        [
            f"CREATE TABLE IF NOT EXISTS {t.meta} (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            f"CREATE TABLE IF NOT EXISTS {t.scores} (\n  {scores}\n)",
            *(f"CREATE INDEX IF NOT EXISTS {t.scores}_{n}_idx ON {t.scores} ({c})" for n, c in INDEXES),
            f"CREATE TABLE IF NOT EXISTS {t.runs} (\n  {runs}\n)",
            *(f"CREATE INDEX IF NOT EXISTS {t.runs}_{n}_idx ON {t.runs} ({c})" for n, c in RUN_INDEXES),
            *_catalog_tables.create_statements(t, POSTGRES),
            *_labels.create_statements(t, POSTGRES),
        ]
    )


async def columns(conn: Any, table: str) -> set[str]:
    """The column names of ``table`` in the current schema (none when there is no such table)."""
    cursor = await conn.execute(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = %s",
        (table.lower(),),
    )
    return {row[0] for row in await cursor.fetchall()}


async def stored_version(conn: Any, t: Tables) -> int | None:
    """The schema version the store records; ``None`` when it records none."""
    if not await columns(conn, t.meta):
        return None
    cursor = await conn.execute(f"SELECT value FROM {t.meta} WHERE key = %s", (SCHEMA_VERSION_KEY,))
    row = await cursor.fetchone()
    return int(row[0]) if row is not None and str(row[0]).isdigit() else None


async def ensure_schema(conn: Any, table: str, where: str) -> None:
    """As ``_sqlite_schema.ensure_schema``, on an autocommit psycopg ``AsyncConnection``: one
    transaction, under an advisory lock so that one process creates the store and the others wait."""
    t = tables(table)
    version = await stored_version(conn, t)
    if version == SCHEMA_VERSION and all(
        [await columns(conn, side) for side in (t.rollup, t.bins, t.versions)]
    ):
        await conn.execute(create_sql(t))
        return
    await _check(conn, t, version, where)
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (t.meta,))
        await _check(conn, t, await stored_version(conn, t), where)
        await conn.execute(create_sql(t))
        if not await columns(conn, t.rollup):
            await add_rollup(conn, t)
        if not await columns(conn, t.bins):
            await add_bins(conn, t)
        if not await columns(conn, t.versions):
            await add_versions(conn, t)
        await conn.execute(
            f"INSERT INTO {t.meta} (key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (SCHEMA_VERSION_KEY, str(SCHEMA_VERSION)),
        )


async def _check(conn: Any, t: Tables, version: int | None, where: str) -> None:
    found = [name for name in store_tables(t) if await columns(conn, name)]
    problem = refusal(version, found, t, where)
    if problem is not None:
        raise problem


async def add_rollup(conn: Any, t: Tables) -> None:
    """Create the rollup, fill it from the stored scores and add the triggers that keep it, inside the
    caller's transaction; the scores table is locked against writes until it commits."""
    await conn.execute(f"LOCK TABLE {t.scores} IN SHARE ROW EXCLUSIVE MODE")
    await conn.execute(_rollup.create_table(t, POSTGRES))
    await conn.execute(f"DELETE FROM {t.rollup}")
    await conn.execute(_rollup.backfill(t, POSTGRES))
    await conn.execute(_rollup.postgres_triggers(t))


async def add_bins(conn: Any, t: Tables) -> None:
    """Create the score histogram, fill it and add its triggers, inside the caller's transaction (the
    scores table locked against writes until it commits)."""
    await conn.execute(f"LOCK TABLE {t.scores} IN SHARE ROW EXCLUSIVE MODE")
    await conn.execute(_bins.create_table(t, POSTGRES))
    await conn.execute(f"DELETE FROM {t.bins}")
    await conn.execute(_bins.backfill(t, POSTGRES))
    await conn.execute(_bins.postgres_triggers(t))


async def add_versions(conn: Any, t: Tables) -> None:
    """Create the versions table, fill it and add its triggers, inside the caller's transaction (the
    scores table locked against writes until it commits)."""
    await conn.execute(f"LOCK TABLE {t.scores} IN SHARE ROW EXCLUSIVE MODE")
    await conn.execute(_versions.create_table(t, POSTGRES))
    await conn.execute(f"DELETE FROM {t.versions}")
    await conn.execute(_versions.backfill(t))
    await conn.execute(_versions.postgres_triggers(t))
