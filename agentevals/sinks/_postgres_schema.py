"""The PostgreSQL store's schema: the columns of the SQLite store (JSONB, TIMESTAMPTZ), created on first
use, migrated in place from version 1, 2 or 3, refused when newer (``_sqlite_schema`` lists the versions)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentevals.sinks import _bins, _catalog_tables, _rollup
from agentevals.sinks._errors import SinkConfigError
from agentevals.sinks._row import (
    INDEXES,
    OUTCOME_KEY,
    RUN_INDEXES,
    RUN_SCHEMA,
    SCHEMA,
    SCHEMA_VERSION,
    SKIP_REASON_KEY,
    Tables,
    tables,
)

PG_TYPES = {
    "text": "TEXT",
    "json": "JSONB",
    "real": "DOUBLE PRECISION",
    "integer": "INTEGER",
    "timestamp": "TIMESTAMPTZ NOT NULL",
    "timestamp_null": "TIMESTAMPTZ",
}
_V1_KEYS = frozenset({"id", "created_at", "scorer_id", "run_id"})
#: A duplicate or missing id (a table made without a unique key) gets one of its own.
_UNIQUE_ID = (
    "CASE WHEN id IS NULL OR agentevals_n > 1 THEN COALESCE(id, '') || '-' || agentevals_n ELSE id END"
)


def create_sql(t: Tables) -> str:
    """The ``CREATE TABLE`` / ``CREATE INDEX`` statements of the scores and runs tables and version 4's
    scorers and drops tables (idempotent; the rollup and histogram are added apart)."""
    scores = ",\n  ".join(
        f"{name} {PG_TYPES[kind]}{' PRIMARY KEY' if name == 'id' else ''}" for name, kind in SCHEMA
    )
    runs = ",\n  ".join(
        f"{name} {PG_TYPES[kind]}{' PRIMARY KEY' if name == 'run_id' else ''}" for name, kind in RUN_SCHEMA
    )
    return ";\n".join(
        [
            f"CREATE TABLE IF NOT EXISTS {t.schema} (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ)",
            f"CREATE TABLE IF NOT EXISTS {t.scores} (\n  {scores}\n)",
            *(f"CREATE INDEX IF NOT EXISTS {t.scores}_{n}_idx ON {t.scores} ({c})" for n, c in INDEXES),
            f"CREATE TABLE IF NOT EXISTS {t.runs} (\n  {runs}\n)",
            *(f"CREATE INDEX IF NOT EXISTS {t.runs}_{n}_idx ON {t.runs} ({c})" for n, c in RUN_INDEXES),
            *_catalog_tables.create_statements(t, postgres=True),
        ]
    )


async def _columns(conn: Any, table: str) -> set[str]:
    cursor = await conn.execute(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = %s",
        (table.lower(),),
    )
    return {row[0] for row in await cursor.fetchall()}


async def stored_version(conn: Any, t: Tables) -> int | None:
    """The schema version recorded in the store; ``None`` when it has no schema table."""
    if not await _columns(conn, t.schema):
        return None
    cursor = await conn.execute(f"SELECT MAX(version) FROM {t.schema}")
    row = await cursor.fetchone()
    return None if row is None or row[0] is None else int(row[0])


async def ensure_schema(conn: Any, table: str, where: str) -> None:
    """As ``_sqlite_schema.ensure_schema``, on an autocommit psycopg ``AsyncConnection``: one
    transaction, under an advisory lock so that one process migrates and the others wait."""
    t = tables(table)
    version = await stored_version(conn, t)
    if version == SCHEMA_VERSION and await _columns(conn, t.rollup) and await _columns(conn, t.bins):
        await conn.execute(create_sql(t))
        return
    _refuse_newer(version, where)
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (t.schema,))
        version = await stored_version(conn, t)
        _refuse_newer(version, where)
        if version is not None and version >= 3 and await _columns(conn, t.rollup):
            if not await _columns(conn, t.bins):  # a version-3 store written before the histogram
                await conn.execute(create_sql(t))
                await add_bins(conn, t)
            await add_v4(conn, t)
            await _record_version(conn, t)
            return
        old = await _columns(conn, t.scores)
        if old and "outcome" not in old:
            if not old >= _V1_KEYS:
                raise SinkConfigError(
                    f"{where}: table {t.scores!r} exists with other columns: it was made by something "
                    "else; pass another table= or drop it to have it re-created"
                )
            await migrate_v1(conn, t, old)
        else:
            await conn.execute(create_sql(t))
        await add_rollup(conn, t)
        await add_bins(conn, t)
        await add_v4(conn, t)
        await _record_version(conn, t)


async def _record_version(conn: Any, t: Tables) -> None:
    await conn.execute(
        f"INSERT INTO {t.schema} (version, applied_at) VALUES (%s, now()) ON CONFLICT DO NOTHING",
        (SCHEMA_VERSION,),
    )


async def add_v4(conn: Any, t: Tables) -> None:
    """Version 4's additions inside the caller's transaction: the scores' ``judge_replies`` column (no
    rewrite: a nullable column without a default) and the scorers and drops tables."""
    await conn.execute(f"ALTER TABLE {t.scores} ADD COLUMN IF NOT EXISTS judge_replies JSONB")
    for statement in _catalog_tables.create_statements(t, postgres=True):
        await conn.execute(statement)


async def add_rollup(conn: Any, t: Tables) -> None:
    """Create the rollup, fill it from the stored scores and add the triggers that keep it, inside the
    caller's transaction; the scores table is locked against writes until it commits."""
    await conn.execute(f"LOCK TABLE {t.scores} IN SHARE ROW EXCLUSIVE MODE")
    await conn.execute(_rollup.create_table(t, postgres=True))
    await conn.execute(f"DELETE FROM {t.rollup}")
    await conn.execute(_rollup.backfill(t, postgres=True))
    await conn.execute(_rollup.postgres_triggers(t))


async def add_bins(conn: Any, t: Tables) -> None:
    """Create the score histogram, fill it and add its triggers, inside the caller's transaction (the
    scores table locked against writes until it commits)."""
    await conn.execute(f"LOCK TABLE {t.scores} IN SHARE ROW EXCLUSIVE MODE")
    await conn.execute(_bins.create_table(t, postgres=True))
    await conn.execute(f"DELETE FROM {t.bins}")
    await conn.execute(_bins.backfill(t, postgres=True))
    await conn.execute(_bins.postgres_triggers(t))


def _refuse_newer(version: int | None, where: str) -> None:
    if version is not None and version > SCHEMA_VERSION:
        raise SinkConfigError(
            f"{where} holds schema version {version}, newer than this agentevals reads and writes "
            f"({SCHEMA_VERSION}): upgrade agentevals (pip install -U agentevals-core), or use another table"
        )


async def migrate_v1(conn: Any, t: Tables, old: set[str]) -> None:
    """Move a version-1 scores table to version 2 inside the caller's transaction (as SQLite's)."""
    legacy = f"{t.scores}_v1"
    await conn.execute(f"ALTER TABLE {t.scores} RENAME TO {legacy}")
    # The primary key's index keeps its name: free it for the new table's.
    await conn.execute(f"ALTER INDEX IF EXISTS {t.scores}_pkey RENAME TO {legacy}_pkey")
    await conn.execute(create_sql(t))
    col = _column_or_null(old)
    text = _metadata_text(old)
    number = _metadata_number(old)
    runs = {
        "run_id": "run_id",
        "created_at": "created_at",
        "trace_id": col("trace_id"),
        "parent_id": f"COALESCE({text('parent_run_id')}, {text('parent_id')})",
        "thread_id": f"COALESCE({text('thread_id')}, {text('session_id')})",
        "entity": col("entity"),
        "source": col("source"),
        "eval_id": text("eval_id"),
        "models": "CASE WHEN jsonb_typeof(metadata->'models') = 'array' THEN metadata->'models' END"
        if "metadata" in old
        else "NULL",
        "input": col("input"),
        "output": col("output"),
        "ground_truth": col("ground_truth"),
        "request_context": col("request_context"),
        "metadata": col("metadata"),
        "input_tokens": f"COALESCE({number('usage,input_tokens')}, {number('usage,prompt_tokens')})::integer",
        "output_tokens": (
            f"COALESCE({number('usage,output_tokens')}, {number('usage,completion_tokens')})::integer"
        ),
        "cost_usd": number("cost_usd"),
    }
    run_cols = [name for name, _ in RUN_SCHEMA]
    await conn.execute(
        f"INSERT INTO {t.runs} ({', '.join(run_cols)}) SELECT "
        + ", ".join(runs.get(name, "NULL") for name in run_cols)
        + " FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY run_id ORDER BY created_at, id) AS agentevals_n "
        f"FROM {legacy}) AS v1 WHERE agentevals_n = 1 ON CONFLICT DO NOTHING"
    )
    scores = {name: col(name) for name, _ in SCHEMA}
    scores.update(
        id=_UNIQUE_ID,
        outcome=(
            f"CASE WHEN {col('error_type')} IS NOT NULL THEN 'failed' "
            f"WHEN {text(OUTCOME_KEY)} = 'skipped' THEN 'skipped' ELSE 'scored' END"
        ),
        skip_reason=text(SKIP_REASON_KEY),
        eval_id=text("eval_id"),
        metadata=f"metadata - '{OUTCOME_KEY}' - '{SKIP_REASON_KEY}'" if "metadata" in old else "NULL",
    )
    score_cols = [name for name, _ in SCHEMA]
    await conn.execute(
        f"INSERT INTO {t.scores} ({', '.join(score_cols)}) SELECT "
        + ", ".join(scores[name] for name in score_cols)
        + " FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY created_at) AS agentevals_n "
        f"FROM {legacy}) AS v1"
    )
    before = await (await conn.execute(f"SELECT COUNT(*) FROM {legacy}")).fetchone()
    after = await (await conn.execute(f"SELECT COUNT(*) FROM {t.scores}")).fetchone()
    if before[0] != after[0]:  # never reached: the insert copies every row or fails
        raise RuntimeError(f"migrating {t.scores} would lose rows ({before[0]} before, {after[0]} after)")
    await conn.execute(f"DROP TABLE {legacy}")


def _column_or_null(old: set[str]) -> Callable[[str], str]:
    return lambda name: name if name in old else "NULL"


def _metadata_text(old: set[str]) -> Callable[[str], str]:
    return lambda key: f"(metadata->>'{key}')" if "metadata" in old else "NULL"


def _metadata_number(old: set[str]) -> Callable[[str], str]:
    """A number at a path of the metadata (``'usage,input_tokens'``), ``NULL`` when it is not one."""
    if "metadata" not in old:
        return lambda path: "NULL"
    return lambda path: (
        f"(CASE WHEN jsonb_typeof(metadata #> '{{{path}}}') = 'number' "
        f"THEN (metadata #>> '{{{path}}}')::double precision END)"
    )
