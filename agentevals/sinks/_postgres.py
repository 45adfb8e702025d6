"""``PostgresSink``: a real PostgreSQL through psycopg 3 (async), batched and parameterized."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentevals._result import ScoreRecord
from agentevals.sinks._row import COLUMNS, INDEXED, SCHEMA, TABLE, record_to_row
from agentevals.sinks._sqlite import check_table

if TYPE_CHECKING:
    import psycopg

_PG_TYPES = {"text": "TEXT", "json": "JSONB", "real": "DOUBLE PRECISION", "integer": "INTEGER"}


class PostgresSink:
    """Writes records to ``table`` in PostgreSQL (the same columns as ``SQLiteSink``; JSONB, TIMESTAMPTZ).

    ``conninfo`` is a libpq connection string or URL. The connection is opened on first write (on the
    engine's loop) and re-opened after an error; the schema is created if missing. Each batch is one
    transaction: ``COPY`` into a temporary staging table, then ``INSERT ... ON CONFLICT (id) DO NOTHING``.
    Needs the extra: ``pip install 'agentevals[postgres]'``.

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
        columns = ", ".join(COLUMNS)
        self._stage = f"_agentevals_stage_{self.table}"[:63]
        self._create_stage = (
            f"CREATE TEMP TABLE IF NOT EXISTS {self._stage} (LIKE {self.table}) ON COMMIT DELETE ROWS"
        )
        self._copy = f"COPY {self._stage} ({columns}) FROM STDIN"
        self._merge = (
            f"INSERT INTO {self.table} ({columns}) SELECT {columns} FROM {self._stage} "
            "ON CONFLICT (id) DO NOTHING"
        )

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        if self._conn is None or self._conn.closed:
            try:
                import psycopg
            except ImportError as err:  # pragma: no cover - depends on the environment
                raise ImportError("PostgresSink needs psycopg 3: pip install 'agentevals[postgres]'") from err
            conn = await psycopg.AsyncConnection.connect(
                self.conninfo, autocommit=False, connect_timeout=max(1, int(self.connect_timeout))
            )
            async with conn.transaction():
                await conn.execute(create_table_sql(self.table))
                await conn.execute(self._create_stage)
            self._conn = conn
        return self._conn

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        if not records:
            return
        rows = [tuple(record_to_row(r).values()) for r in records]
        conn = await self._connect()
        try:
            async with conn.transaction(), conn.cursor() as cur:
                # COPY into a per-connection staging table, then one INSERT ... ON CONFLICT: several
                # times faster than row-by-row INSERTs, still parameter-free of user data in SQL text.
                async with cur.copy(self._copy) as copy:
                    for row in rows:
                        await copy.write_row(row)
                await cur.execute(self._merge)
        except Exception:
            await self._drop_connection()
            raise

    async def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.closed:
            await conn.close()

    async def close(self) -> None:
        await self._drop_connection()


def create_table_sql(table: str) -> str:
    """The ``CREATE TABLE`` / ``CREATE INDEX`` statements for ``table`` in PostgreSQL (idempotent)."""
    types = {**_PG_TYPES, "timestamp": "TIMESTAMPTZ NOT NULL"}
    cols = ",\n  ".join(
        f"{name} {types[kind]}{' PRIMARY KEY' if name == 'id' else ''}" for name, kind in SCHEMA
    )
    indexes = "".join(
        f"CREATE INDEX IF NOT EXISTS {table}_{col}_idx ON {table} ({col});\n" for col in INDEXED
    )
    return f"CREATE TABLE IF NOT EXISTS {table} (\n  {cols}\n);\n{indexes}"
