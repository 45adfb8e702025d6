"""``PostgresSink``: a real PostgreSQL through psycopg 3 (async), batched and parameterized."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from agentevals._result import ScoreRecord
from agentevals.sinks._row import INDEXED, SCHEMA, TABLE, record_to_row
from agentevals.sinks._sqlite import check_table

if TYPE_CHECKING:
    import psycopg

_PG_TYPES = {
    "text": "TEXT",
    "json": "JSONB",
    "real": "DOUBLE PRECISION",
    "integer": "INTEGER",
    "timestamp": "TIMESTAMPTZ NOT NULL",
}
# PostgreSQL text and jsonb cannot hold U+0000; an escaped NUL (not an escaped backslash) becomes U+FFFD.
_NUL = re.compile(rb"(?<!\\)((?:\\\\)*)\\u0000")


class PostgresSink:
    """Writes records to ``table`` in PostgreSQL (the same columns as ``SQLiteSink``; JSONB, TIMESTAMPTZ).

    ``conninfo`` is a libpq connection string or URL. The connection is opened on first write (on the
    engine's loop) and re-opened after an error; the schema is created if missing. Each batch is one
    statement with one parameter: the batch as a JSON array, unpacked into columns by PostgreSQL
    (``jsonb_array_elements``), inserted with ``ON CONFLICT (id) DO NOTHING`` so re-sent batches add
    nothing. Needs the extra: ``pip install 'agentevals[postgres]'``.

    >>> sink = PostgresSink("postgresql://postgres@127.0.0.1:5432/test", table="scores")
    >>> sink.table
    'scores'
    """

    name = "postgres"

    def __init__(self, conninfo: str = "", *, table: str = TABLE, connect_timeout: float = 10.0) -> None:
        self.conninfo = conninfo
        self.table = check_table(table)
        self.connect_timeout = connect_timeout
        self._conn: psycopg.AsyncConnection[Any] | None = None
        columns = ", ".join(name for name, _ in SCHEMA)
        values = ", ".join(_extract(name, kind) for name, kind in SCHEMA)
        self._insert = (
            f"INSERT INTO {self.table} ({columns}) SELECT {values} "
            "FROM jsonb_array_elements(%s::jsonb) AS r ON CONFLICT (id) DO NOTHING"
        )

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        if self._conn is None or self._conn.closed:
            try:
                import psycopg
            except ImportError as err:  # pragma: no cover - depends on the environment
                raise ImportError("PostgresSink needs psycopg 3: pip install 'agentevals[postgres]'") from err
            conn = await psycopg.AsyncConnection.connect(
                self.conninfo, autocommit=True, connect_timeout=max(1, int(self.connect_timeout))
            )
            await conn.execute(create_table_sql(self.table))
            self._conn = conn
        return self._conn

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        if not records:
            return
        payload = b"[" + b",".join(_doc(r) for r in records) + b"]"
        if b"\\u0000" in payload:
            payload = _NUL.sub(rb"\1\\ufffd", payload)
        conn = await self._connect()
        try:
            await conn.execute(self._insert, (payload.decode(),))  # autocommit: one statement, atomic
        except Exception:
            await self._drop_connection()
            raise

    async def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.closed:
            await conn.close()

    async def close(self) -> None:
        await self._drop_connection()


def _doc(record: ScoreRecord) -> bytes:
    return to_json(record_to_row(record, json_as_text=None), fallback=repr, inf_nan_mode="null")


def _extract(name: str, kind: str) -> str:
    if kind == "json":
        return f"NULLIF(r->'{name}', 'null'::jsonb)"
    if kind == "text":
        return f"(r->>'{name}')"
    cast = {"real": "double precision", "integer": "integer", "timestamp": "timestamptz"}[kind]
    return f"(r->>'{name}')::{cast}"


def create_table_sql(table: str) -> str:
    """The ``CREATE TABLE`` / ``CREATE INDEX`` statements for ``table`` in PostgreSQL (idempotent)."""
    cols = ",\n  ".join(
        f"{name} {_PG_TYPES[kind]}{' PRIMARY KEY' if name == 'id' else ''}" for name, kind in SCHEMA
    )
    indexes = "".join(
        f"CREATE INDEX IF NOT EXISTS {table}_{col}_idx ON {table} ({col});\n" for col in INDEXED
    )
    return f"CREATE TABLE IF NOT EXISTS {table} (\n  {cols}\n);\n{indexes}"
