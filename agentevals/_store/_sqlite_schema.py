"""The SQLite store's schema: created on first use, upgraded in place from version 1, refused when it is
neither (see ``_schema_check``). The rollup, histogram, versions, catalog and labels tables are
described in ``_rollup``, ``_bins``, ``_versions``, ``_catalog_tables`` and ``_labels``.
"""

from __future__ import annotations

import sqlite3

from agentevals._store import _bins, _catalog_tables, _labels, _rollup, _versions
from agentevals._store._dialect import SQLITE
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


def create_statements(t: Tables) -> list[str]:
    """``CREATE TABLE`` / ``CREATE INDEX`` statements of the meta, scores, runs, scorers, drops and labels
    tables (idempotent; the rollup, histogram and versions table are :func:`add_rollup`'s,
    :func:`add_bins`' and :func:`add_versions`').

    Scores are unique on ``id`` (a record's id is derived from its run, scorer and version, so a
    re-sent or re-scored record adds nothing); runs on ``run_id``.
    """
    types = SQLITE.column_types
    scores = ",\n  ".join(f"{name} {types[kind]}" for name, kind in SCHEMA)
    runs = ",\n  ".join(
        f"{name} {types[kind]}{' PRIMARY KEY' if name == 'run_id' else ''}" for name, kind in RUN_SCHEMA
    )
    return [
        f"CREATE TABLE IF NOT EXISTS {t.meta} (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        f"CREATE TABLE IF NOT EXISTS {t.scores} (\n  {scores}\n)",
        f"CREATE UNIQUE INDEX IF NOT EXISTS {t.scores}_id_key ON {t.scores} (id)",
        *(f"CREATE INDEX IF NOT EXISTS {t.scores}_{n}_idx ON {t.scores} ({c})" for n, c in INDEXES),
        f"CREATE TABLE IF NOT EXISTS {t.runs} (\n  {runs}\n)",
        *(f"CREATE INDEX IF NOT EXISTS {t.runs}_{n}_idx ON {t.runs} ({c})" for n, c in RUN_INDEXES),
        *_catalog_tables.create_statements(t, SQLITE),
        *_labels.create_statements(t, SQLITE),
    ]


def stored_version(conn: sqlite3.Connection, t: Tables) -> int | None:
    """The schema version the store records; ``None`` when it records none."""
    if not columns(conn, t.meta):
        return None
    row = conn.execute(f"SELECT value FROM {t.meta} WHERE key = ?", (SCHEMA_VERSION_KEY,)).fetchone()
    return int(row[0]) if row is not None and str(row[0]).isdigit() else None


def ensure_schema(conn: sqlite3.Connection, table: str, where: str) -> None:
    """Make the store of ``table`` ready: create it when it has none of its tables (one transaction,
    which one process runs while the others wait), add the labels and versions tables to a store of
    version 1 or the versions table to a version-2 store made without it (the same transaction, which
    creates only what is missing: the other tables keep their rows), restore a trigger or table dropped
    by hand, or raise :class:`~agentevals._store._errors.SinkConfigError` when it is not a store of this
    release (see ``_schema_check``). ``where`` names the store in messages."""
    t = tables(table)
    version = stored_version(conn, t)
    if version == SCHEMA_VERSION and all(columns(conn, side) for side in (t.rollup, t.bins, t.versions)):
        for statement in [*create_statements(t), *_triggers(t)]:  # dropped by hand: back
            conn.execute(statement)
        return
    _check(conn, t, version, where)
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = stored_version(conn, t)
        _check(conn, t, version, where)
        for statement in create_statements(t):
            conn.execute(statement)
        if not columns(conn, t.rollup):
            add_rollup(conn, t)
        if not columns(conn, t.bins):
            add_bins(conn, t)
        if not columns(conn, t.versions):
            add_versions(conn, t)
        for statement in _triggers(t):  # those of the side tables that were kept
            conn.execute(statement)
        conn.execute(
            f"INSERT INTO {t.meta} (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (SCHEMA_VERSION_KEY, str(SCHEMA_VERSION)),
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _triggers(t: Tables) -> list[str]:
    """The triggers that keep the rollup, histogram and versions table (``IF NOT EXISTS``)."""
    return [*_rollup.sqlite_triggers(t), *_bins.sqlite_triggers(t), *_versions.sqlite_triggers(t)]


def _check(conn: sqlite3.Connection, t: Tables, version: int | None, where: str) -> None:
    found = [name for name in store_tables(t) if columns(conn, name)]
    problem = refusal(version, found, t, where)
    if problem is not None:
        raise problem


def add_rollup(conn: sqlite3.Connection, t: Tables) -> None:
    """Create the rollup, fill it from the stored scores and add the triggers that keep it (inside the
    caller's transaction, so no row is written in between)."""
    conn.execute(_rollup.create_table(t, SQLITE))
    conn.execute(f"DELETE FROM {t.rollup}")
    conn.execute(_rollup.backfill(t, SQLITE))
    for statement in _rollup.sqlite_triggers(t):
        conn.execute(statement)


def add_bins(conn: sqlite3.Connection, t: Tables) -> None:
    """Create the score histogram, fill it and add its triggers (inside the caller's transaction)."""
    conn.execute(_bins.create_table(t, SQLITE))
    conn.execute(f"DELETE FROM {t.bins}")
    conn.execute(_bins.backfill(t, SQLITE))
    for statement in _bins.sqlite_triggers(t):
        conn.execute(statement)


def add_versions(conn: sqlite3.Connection, t: Tables) -> None:
    """Create the versions table, fill it and add its triggers (inside the caller's transaction)."""
    conn.execute(_versions.create_table(t, SQLITE))
    conn.execute(f"DELETE FROM {t.versions}")
    conn.execute(_versions.backfill(t))
    for statement in _versions.sqlite_triggers(t):
        conn.execute(statement)


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """The column names of ``table`` (none when there is no such table)."""
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
