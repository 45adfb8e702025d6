"""``SQLiteSink``: the embedded default store, one file, WAL mode, batched inserts."""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Sequence
from datetime import UTC
from pathlib import Path
from typing import Any

from agentevals._result import ScoreRecord
from agentevals.sinks._row import COLUMNS, INDEXED, SCHEMA, TABLE, record_to_row
from agentevals.sinks._thread import WorkerThread

TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_SQLITE_TYPES = {"text": "TEXT", "json": "TEXT", "real": "REAL", "integer": "INTEGER", "timestamp": "TEXT"}


def check_table(table: str) -> str:
    """``table`` if it is a safe SQL identifier, else a ``ValueError`` saying what is allowed."""
    if not isinstance(table, str) or not TABLE_NAME.match(table):
        raise ValueError(
            f"invalid table name {table!r}: use letters, digits and underscores, starting with a "
            "letter or underscore, at most 63 characters (e.g. 'agentevals_scores')"
        )
    return table


class SQLiteSink:
    """Writes records to ``table`` in the SQLite file at ``path`` (created with its schema on first use).

    Each batch is one transaction (``INSERT OR IGNORE`` with ``executemany``) on the sink's own thread.
    ``created_at`` is ISO-8601 UTC text; JSON columns hold JSON text (query them with ``json_extract``).

    >>> sink = SQLiteSink("agentevals.db")
    >>> sink.table
    'agentevals_scores'
    """

    name = "sqlite"

    def __init__(self, path: str | os.PathLike[str] = "agentevals.db", *, table: str = TABLE) -> None:
        self.path = Path(path)
        self.table = check_table(table)
        self._conn: sqlite3.Connection | None = None
        self._worker = WorkerThread(f"agentevals-sink-sqlite-{self.path.name}")
        placeholders = ", ".join("?" for _ in COLUMNS)
        self._insert = f"INSERT OR IGNORE INTO {self.table} ({', '.join(COLUMNS)}) VALUES ({placeholders})"

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            if self.path.parent != Path():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA cache_size=-16384")  # 16 MiB: keeps the four indexes' hot pages cached
            conn.execute("PRAGMA wal_autocheckpoint=10000")  # fewer, larger checkpoints (WAL <= ~40 MiB)
            conn.executescript(create_table_sql(self.table))
            self._conn = conn
        return self._conn

    def _write_records(self, records: Sequence[ScoreRecord]) -> None:
        # Rows are built here, on the sink's thread, so the engine's loop stays free for scoring.
        self._write_rows([_sqlite_row(r) for r in records])

    def _write_rows(self, rows: list[tuple[Any, ...]]) -> None:
        conn = self._connect()
        conn.execute("BEGIN")
        try:
            conn.executemany(self._insert, rows)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        batch = list(records)
        await self._worker.run(lambda: self._write_records(batch))

    async def close(self) -> None:
        def close_conn() -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        await self._worker.run(close_conn)
        self._worker.stop()


def create_table_sql(table: str) -> str:
    """The ``CREATE TABLE`` / ``CREATE INDEX`` script for ``table`` (idempotent)."""
    cols = ",\n  ".join(
        f"{name} {_SQLITE_TYPES[kind]}{' PRIMARY KEY' if name == 'id' else ''}" for name, kind in SCHEMA
    )
    indexes = "".join(
        f"CREATE INDEX IF NOT EXISTS {table}_{col}_idx ON {table} ({col});\n" for col in INDEXED
    )
    return f"CREATE TABLE IF NOT EXISTS {table} (\n  {cols}\n);\n{indexes}"


def _sqlite_row(record: ScoreRecord) -> tuple[Any, ...]:
    row = record_to_row(record)
    row["created_at"] = row["created_at"].astimezone(UTC).isoformat()
    return tuple(row.values())
