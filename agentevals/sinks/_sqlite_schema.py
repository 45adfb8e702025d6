"""The SQLite store's schema: created on first use, migrated in place from version 1, refused when newer.

Version 1 was one table (``agentevals_scores``) whose rows each held their run's input and output.
Version 2 keeps one row per run in ``agentevals_runs`` and one per (run, scorer) in ``agentevals_scores``
(outcome, skip reason and eval id as columns); ``agentevals_schema`` records the version. Version 3 adds
``agentevals_rollup`` (see ``_rollup``), filled from the stored scores when a store is migrated. Version 4
adds the scores' ``judge_replies`` column (``NULL`` in rows written before) and the scorers and drops tables
(see ``_catalog_tables``), empty when a store is migrated.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

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

_SQLITE_TYPES = {
    "text": "TEXT",
    "json": "TEXT",
    "real": "REAL",
    "integer": "INTEGER",
    "timestamp": "TEXT",
    "timestamp_null": "TEXT",
}
#: Columns a version-1 table has for certain (a table without them was made by something else).
_V1_KEYS = frozenset({"id", "created_at", "scorer_id", "run_id"})
_MODELS = "CASE json_type(metadata, '$.models') WHEN 'array' THEN json_extract(metadata, '$.models') END"
_FIRST_PER_RUN = "ROW_NUMBER() OVER (PARTITION BY run_id ORDER BY created_at, rowid) AS agentevals_n"
_FIRST_PER_ID = "ROW_NUMBER() OVER (PARTITION BY id ORDER BY rowid) AS agentevals_n"


def create_statements(t: Tables) -> list[str]:
    """``CREATE TABLE`` / ``CREATE INDEX`` statements of the scores and runs tables and version 4's
    scorers and drops tables (idempotent; the rollup of version 3 is :func:`add_rollup`'s).

    Scores are unique on ``id`` (a record's id is derived from its run, scorer and version, so a
    re-sent or re-scored record adds nothing); runs on ``run_id``.
    """
    scores = ",\n  ".join(f"{name} {_SQLITE_TYPES[kind]}" for name, kind in SCHEMA)
    runs = ",\n  ".join(
        f"{name} {_SQLITE_TYPES[kind]}{' PRIMARY KEY' if name == 'run_id' else ''}"
        for name, kind in RUN_SCHEMA
    )
    return [
        f"CREATE TABLE IF NOT EXISTS {t.schema} (version INTEGER PRIMARY KEY, applied_at TEXT)",
        f"CREATE TABLE IF NOT EXISTS {t.scores} (\n  {scores}\n)",
        f"CREATE UNIQUE INDEX IF NOT EXISTS {t.scores}_id_key ON {t.scores} (id)",
        *(f"CREATE INDEX IF NOT EXISTS {t.scores}_{n}_idx ON {t.scores} ({c})" for n, c in INDEXES),
        f"CREATE TABLE IF NOT EXISTS {t.runs} (\n  {runs}\n)",
        *(f"CREATE INDEX IF NOT EXISTS {t.runs}_{n}_idx ON {t.runs} ({c})" for n, c in RUN_INDEXES),
        *_catalog_tables.create_statements(t, postgres=False),
    ]


def stored_version(conn: sqlite3.Connection, t: Tables) -> int | None:
    """The schema version recorded in the store; ``None`` when it has no schema table."""
    if not _columns(conn, t.schema):
        return None
    row = conn.execute(f"SELECT MAX(version) FROM {t.schema}").fetchone()
    return None if row is None or row[0] is None else int(row[0])


def ensure_schema(conn: sqlite3.Connection, table: str, where: str) -> None:
    """Make the store of ``table`` a version-4 store: create it, or migrate a version-1, -2 or -3 store
    in place (one transaction: every row kept, the rollup filled from them), or raise
    :class:`SinkConfigError` when it is newer than this library or ``table`` was made by something
    else. ``where`` names the store in messages."""
    t = tables(table)
    version = stored_version(conn, t)
    if version == SCHEMA_VERSION and _columns(conn, t.rollup) and _columns(conn, t.bins):
        triggers = [*_rollup.sqlite_triggers(t), *_bins.sqlite_triggers(t)]
        for statement in [*create_statements(t), *triggers]:  # dropped by hand: back
            conn.execute(statement)
        return
    _refuse_newer(version, where)
    conn.execute("BEGIN IMMEDIATE")  # one process migrates; the others wait, then see version 4
    try:
        version = stored_version(conn, t)
        _refuse_newer(version, where)
        if version is None or version < 3 or not _columns(conn, t.rollup):
            old = _columns(conn, t.scores)
            if old and "outcome" not in old:
                if not old >= _V1_KEYS:
                    raise SinkConfigError(
                        f"{where}: table {t.scores!r} exists with other columns: it was made by something "
                        "else; pass another table= or path"
                    )
                migrate_v1(conn, t, old)
            else:
                for statement in create_statements(t):
                    conn.execute(statement)
            add_rollup(conn, t)
        if not _columns(conn, t.bins):  # a version-3 store written before the histogram: rebuilt
            for statement in create_statements(t):
                conn.execute(statement)
            add_bins(conn, t)
        add_v4(conn, t)
        if version != SCHEMA_VERSION:
            conn.execute(
                f"INSERT OR IGNORE INTO {t.schema} (version, applied_at) VALUES (?, datetime('now'))",
                (SCHEMA_VERSION,),
            )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def add_rollup(conn: sqlite3.Connection, t: Tables) -> None:
    """Create the rollup, fill it from the stored scores and add the triggers that keep it (inside the
    caller's transaction, so no row is written in between)."""
    conn.execute(_rollup.create_table(t, postgres=False))
    conn.execute(f"DELETE FROM {t.rollup}")
    conn.execute(_rollup.backfill(t, postgres=False))
    for statement in _rollup.sqlite_triggers(t):
        conn.execute(statement)


def add_v4(conn: sqlite3.Connection, t: Tables) -> None:
    """Version 4's additions (inside the caller's transaction): the scores' ``judge_replies`` column
    (cheap: SQLite adds a column without rewriting rows) and the scorers and drops tables."""
    if "judge_replies" not in _columns(conn, t.scores):
        conn.execute(f"ALTER TABLE {t.scores} ADD COLUMN judge_replies TEXT")
    for statement in _catalog_tables.create_statements(t, postgres=False):
        conn.execute(statement)


def add_bins(conn: sqlite3.Connection, t: Tables) -> None:
    """Create the score histogram, fill it and add its triggers (inside the caller's transaction)."""
    conn.execute(_bins.create_table(t, postgres=False))
    conn.execute(f"DELETE FROM {t.bins}")
    conn.execute(_bins.backfill(t, postgres=False))
    for statement in _bins.sqlite_triggers(t):
        conn.execute(statement)


def _refuse_newer(version: int | None, where: str) -> None:
    if version is not None and version > SCHEMA_VERSION:
        raise SinkConfigError(
            f"{where} holds schema version {version}, newer than this agentevals reads and writes "
            f"({SCHEMA_VERSION}): upgrade agentevals (pip install -U agentevals-core), or use another store"
        )


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def migrate_v1(conn: sqlite3.Connection, t: Tables, old: set[str]) -> None:
    """Move a version-1 scores table to version 2 inside the caller's transaction: runs from the first
    row of each run id, every score row copied (outcome from ``error_type`` and the metadata's
    ``agentevals_outcome``, skip reason and eval id from the metadata). Raises if a row would be lost."""
    legacy = f"{t.scores}_v1"
    conn.execute(f"ALTER TABLE {t.scores} RENAME TO {legacy}")
    for statement in create_statements(t):
        conn.execute(statement)
    col = _column_or_null(old)
    meta = _metadata_path(old)
    runs = {
        "run_id": "run_id",
        "created_at": "created_at",
        "trace_id": col("trace_id"),
        "parent_id": f"COALESCE({meta('parent_run_id')}, {meta('parent_id')})",
        "thread_id": f"COALESCE({meta('thread_id')}, {meta('session_id')})",
        "entity": col("entity"),
        "source": col("source"),
        "eval_id": meta("eval_id"),
        "models": _if_valid(old, _MODELS),
        "input": col("input"),
        "output": col("output"),
        "ground_truth": col("ground_truth"),
        "request_context": col("request_context"),
        "metadata": col("metadata"),
        "input_tokens": f"COALESCE({meta('usage.input_tokens')}, {meta('usage.prompt_tokens')})",
        "output_tokens": f"COALESCE({meta('usage.output_tokens')}, {meta('usage.completion_tokens')})",
        "cost_usd": meta("cost_usd"),
    }
    run_cols = [name for name, _ in RUN_SCHEMA]
    conn.execute(
        f"INSERT OR IGNORE INTO {t.runs} ({', '.join(run_cols)}) SELECT "
        + ", ".join(runs.get(name, "NULL") for name in run_cols)
        + f" FROM (SELECT *, {_FIRST_PER_RUN} "
        f"FROM {legacy}) WHERE agentevals_n = 1"
    )
    scores = {name: col(name) for name, _ in SCHEMA}
    scores.update(
        # A duplicate or missing id (a table made without a unique index) gets one of its own.
        id="CASE WHEN id IS NULL OR agentevals_n > 1 THEN COALESCE(id, '') || '-' || rowid ELSE id END",
        outcome=(
            f"CASE WHEN {col('error_type')} IS NOT NULL THEN 'failed' "
            f"WHEN {meta(OUTCOME_KEY)} = 'skipped' THEN 'skipped' ELSE 'scored' END"
        ),
        skip_reason=meta(SKIP_REASON_KEY),
        eval_id=meta("eval_id"),
        metadata=_if_valid(
            old, f"json_remove(metadata, '$.{OUTCOME_KEY}', '$.{SKIP_REASON_KEY}')", "metadata"
        ),
    )
    score_cols = [name for name, _ in SCHEMA]
    conn.execute(
        f"INSERT INTO {t.scores} ({', '.join(score_cols)}) SELECT "
        + ", ".join(scores[name] for name in score_cols)
        + f" FROM (SELECT *, rowid, {_FIRST_PER_ID} "
        f"FROM {legacy})"
    )
    (before,) = conn.execute(f"SELECT COUNT(*) FROM {legacy}").fetchone()
    (after,) = conn.execute(f"SELECT COUNT(*) FROM {t.scores}").fetchone()
    if after != before:  # never reached: the insert copies every row or fails
        raise RuntimeError(f"migrating {t.scores} would lose rows ({before} before, {after} after)")
    conn.execute(f"DROP TABLE {legacy}")


def _column_or_null(old: set[str]) -> Callable[[str], str]:
    return lambda name: name if name in old else "NULL"


def _if_valid(old: set[str], expression: str, otherwise: str = "NULL") -> str:
    if "metadata" not in old:
        return "NULL"
    return f"(CASE WHEN json_valid(metadata) THEN {expression} ELSE {otherwise} END)"


def _metadata_path(old: set[str]) -> Callable[[str], str]:
    """A JSON path into the metadata column (``NULL`` when it is absent or not JSON)."""
    return lambda path: _if_valid(old, f"json_extract(metadata, '$.{path}')")
