"""``PostgresSink``: a real PostgreSQL through psycopg 3 (async), batched and parameterized."""

from __future__ import annotations

import math
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from agentevals._model._result import ScoreRecord, utc_now
from agentevals._store._catalog_tables import DropCount, ScorerInfo, add_drops_sql, upsert_scorers_sql
from agentevals._store._dialect import POSTGRES
from agentevals._store._postgres_schema import columns, ensure_schema
from agentevals._store._postgres_writes import COPY_TYPES, copy_sql, insert_json_sql
from agentevals._store._row import (
    COLUMNS,
    RUN_SCHEMA,
    SCHEMA,
    TABLE,
    first_per_run,
    last_per_id,
    row_json,
    run_row_json,
    sql_row,
    tables,
)
from agentevals._store._table_name import check_table
from agentevals._support._sync import run_sync
from agentevals.sinks._errors import SinkConfigError
from agentevals.sinks._options import OnConflict, StoreRuns, check_on_conflict, check_store_runs
from agentevals.sinks._retry import is_number

if TYPE_CHECKING:
    import psycopg

#: Smaller batches go as one INSERT statement (one round trip; COPY in a transaction takes three).
COPY_MIN_ROWS = 64
# PostgreSQL text and jsonb cannot hold U+0000; an escaped NUL (not an escaped backslash) becomes U+FFFD.
_NUL = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")


class PostgresSink:
    """Writes records to ``table`` in PostgreSQL (the same tables and columns as ``SQLiteSink``; JSONB,
    TIMESTAMPTZ), and each record's run, once, to the runs table beside it (``store_runs="none"``: not).

    ``conninfo`` is a libpq connection string or URL. The connection is opened on first write (on the
    engine's loop) and re-opened after an error; the schema is created if missing. Each batch is one
    transaction: its rows are streamed with ``COPY`` as they are built. If a row is already stored (a
    re-sent batch) or holds text PostgreSQL cannot (U+0000, stored as U+FFFD), nothing is written and
    the batch goes again as one ``INSERT ... ON CONFLICT (id) DO NOTHING`` of a JSON array PostgreSQL
    unpacks (also the statement for batches under ``COPY_MIN_ROWS``), so re-sent records add nothing.
    With ``on_conflict="replace"`` every batch is one ``INSERT ... ON CONFLICT (id) DO UPDATE``: a record
    replaces the stored row of its id (``rescore(..., force=True)``); runs rows are always kept.
    Needs the extra: ``pip install 'agentevals-core[postgres]'``.

    >>> sink = PostgresSink("postgresql://postgres@127.0.0.1:5432/test", table="scores")
    >>> sink.table
    'scores'
    """

    name = "postgres"

    def __init__(
        self,
        conninfo: str = "",
        *,
        table: str = TABLE,
        connect_timeout: float = 10.0,
        store_runs: StoreRuns = "sampled",
        on_conflict: OnConflict = "keep",
    ) -> None:
        self.conninfo = conninfo
        self.table = check_table(table)
        self.runs_table = tables(self.table).runs
        self.store_runs = check_store_runs(store_runs)
        self.on_conflict = check_on_conflict(on_conflict)
        if not (is_number(connect_timeout) and math.isfinite(connect_timeout) and connect_timeout > 0):
            raise ValueError(
                "connect_timeout must be a positive, finite number of seconds (e.g. 10.0), "
                f"got {connect_timeout!r}"
            )
        self.connect_timeout = connect_timeout
        self._conn: psycopg.AsyncConnection[Any] | None = None
        self._copy = copy_sql(self.table)
        self._insert = insert_json_sql(self.table, SCHEMA, replace=self.on_conflict == "replace")
        self._insert_runs = insert_json_sql(self.runs_table, RUN_SCHEMA, replace=False)

    def check(self) -> None:
        """Verify the configuration before any write: psycopg is installed, the server accepts the
        connection (database, role, password) and the tables exist with the expected columns or can be
        created (a store of another release is refused). Raises :class:`~agentevals.sinks.SinkConfigError`
        saying how to fix it (``transient`` when the server cannot be reached right now). Blocks for at
        most ``connect_timeout`` seconds.

        >>> PostgresSink("host=127.0.0.1 port=1").check()  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        agentevals.sinks.SinkConfigError: PostgresSink cannot connect: ... is the server running?
        """
        found = run_sync(self._check_tables())
        missing = [column for column in COLUMNS if column not in found]
        if missing:
            raise SinkConfigError(
                f"PostgresSink: table {self.table!r} exists without the column(s) {', '.join(missing)}: "
                "it was made by something else; pass another table= or drop it to have it re-created"
            )

    async def _check_tables(self) -> set[str]:
        """The columns of the scores table, after creating the store or checking it."""
        psycopg = _import_psycopg()
        timeout = max(1, int(self.connect_timeout))
        try:
            conn = await psycopg.AsyncConnection.connect(
                self.conninfo, autocommit=True, connect_timeout=timeout
            )
        except psycopg.Error as err:
            raise config_error(err, "connect" if _is_connect_error(err) else "use the table") from err
        try:
            await ensure_schema(conn, self.table, f"PostgresSink: table {self.table!r}")
            return await columns(conn, self.table)
        except psycopg.Error as err:
            raise config_error(err, "use the table") from err
        finally:
            await conn.close()

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        if self._conn is None or self._conn.closed:
            psycopg = _import_psycopg()
            try:
                conn = await psycopg.AsyncConnection.connect(
                    self.conninfo, autocommit=True, connect_timeout=max(1, int(self.connect_timeout))
                )
            except psycopg.Error as err:
                problem = config_error(err, "connect")
                if problem.transient:
                    raise
                raise problem from err
            try:
                await ensure_schema(conn, self.table, f"PostgresSink: table {self.table!r}")
            except BaseException:
                await conn.close()
                raise
            self._conn = conn
        return self._conn

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        if not records:
            return
        conn = await self._connect()
        async with self._using_table():
            if self.store_runs != "none":  # runs first: a score row never points at a missing run
                runs = [run_row_json(r) for r in first_per_run(records)]
                await self._insert_json(conn, self._insert_runs, runs)
            if self.on_conflict == "replace":  # COPY cannot update a stored row
                await self._insert_rows(conn, last_per_id(records))
            elif len(records) < COPY_MIN_ROWS or not await self._copy_rows(conn, records):
                await self._insert_rows(conn, records)

    async def write_runs(self, records: Sequence[ScoreRecord]) -> None:
        """Store the runs of ``records`` and not their scores (``store_runs="all"``: the runs no scorer
        sampled, from a ``ScoringEngine``)."""
        if not records:
            return
        conn = await self._connect()
        async with self._using_table():
            await self._insert_json(
                conn, self._insert_runs, [run_row_json(r) for r in first_per_run(records)]
            )

    async def write_scorers(self, scorers: Sequence[ScorerInfo]) -> None:
        """Store each scorer's name, version and pass threshold in the scorers table (a
        ``ScoringEngine`` and ``run_evals`` call it when they start; see ``_catalog_tables``)."""
        now = utc_now()
        await self._execute_many(
            upsert_scorers_sql(tables(self.table), POSTGRES), [s.row(now) for s in scorers]
        )

    async def write_drops(self, drops: Sequence[DropCount]) -> None:
        """Add counts of runs a ``ScoringEngine`` dropped to the drops table (one upsert per key)."""
        await self._execute_many(add_drops_sql(tables(self.table), POSTGRES), [d.row() for d in drops])

    async def _execute_many(self, statement: str, rows: list[tuple[Any, ...]]) -> None:
        """``statement`` once per row, in one transaction (rows sorted: concurrent writers lock the
        same keys in the same order)."""
        if not rows:
            return
        conn = await self._connect()
        async with self._using_table(), conn.transaction(), conn.cursor() as cursor:
            await cursor.executemany(statement, sorted(rows, key=repr))

    @asynccontextmanager
    async def _using_table(self) -> AsyncIterator[None]:
        """Around a write: on a failure the connection is dropped (the next write reconnects) and the
        error raised as it is when transient (retried), else as a :class:`SinkConfigError`."""
        try:
            yield
        except Exception as err:
            await self._drop_connection()
            problem = config_error(err, "use the table")
            if problem.transient:
                raise
            raise problem from err

    async def _copy_rows(self, conn: psycopg.AsyncConnection[Any], records: Sequence[ScoreRecord]) -> bool:
        """Stream the rows with ``COPY`` in one transaction; ``False`` (nothing written) if a row is
        already stored or holds U+0000."""
        import psycopg

        try:
            async with conn.transaction(), conn.cursor() as cursor, cursor.copy(self._copy) as copy:
                copy.set_types(COPY_TYPES)
                for record in records:
                    await copy.write_row(sql_row(record))
        except (psycopg.errors.UniqueViolation, psycopg.DataError):
            return False
        return True

    async def _insert_rows(self, conn: psycopg.AsyncConnection[Any], records: Sequence[ScoreRecord]) -> None:
        await self._insert_json(conn, self._insert, [row_json(r) for r in records])

    @staticmethod
    async def _insert_json(conn: psycopg.AsyncConnection[Any], statement: str, rows: list[str]) -> None:
        payload = f"[{','.join(rows)}]"
        if "\\u0000" in payload:
            payload = _NUL.sub(r"\1\\ufffd", payload)
        await conn.execute(statement, (payload,))  # autocommit: one statement, atomic

    async def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.closed:
            await conn.close()

    async def close(self) -> None:
        await self._drop_connection()


def _import_psycopg() -> Any:
    try:
        import psycopg
    except ImportError as err:
        raise SinkConfigError(
            f"PostgresSink needs psycopg 3, which cannot be imported ({err}): "
            "pip install 'agentevals-core[postgres]'"
        ) from err
    return psycopg


_CONNINFO = "fix the connection string (libpq key=value pairs or a postgresql:// URL)"
_PASSWORD = "password= in the connection string, PGPASSWORD or ~/.pgpass"
# (words the error has, more words it has, how to fix it): failures no retry fixes.
_FIXES = (
    (
        'database "',
        "does not exist",
        "create the database (createdb NAME) or fix dbname in the connection string",
    ),
    (
        'role "',
        "does not exist",
        "create the role (CREATE ROLE NAME LOGIN) or fix user in the connection string",
    ),
    ("password authentication failed", "", f"check the password ({_PASSWORD})"),
    ("no password supplied", "", f"give a password ({_PASSWORD})"),
    ("authentication failed", "", "check the user and credentials in the connection string"),
    ("no pg_hba.conf entry", "", "allow this host, user and database in the server's pg_hba.conf"),
    ("invalid connection option", "", _CONNINFO),
    ("invalid uri", "", _CONNINFO),
    ('missing "="', "", _CONNINFO),
    ("does not support ssl", "", "match sslmode in the connection string to what the server supports"),
)
# SQLSTATE classes and codes: login refused (28), unknown database (3D), no privilege (42501), a table
# of another shape (42703 undefined column, 42804 datatype mismatch, 42P10 no unique index on id).
_STATE_FIXES = {
    "28": "check the user and credentials in the connection string",
    "3D": "create the database (createdb NAME) or fix dbname in the connection string",
    "42501": "grant this role CREATE on the schema and INSERT on the table, or connect as another role",
    "42703": "the table exists with other columns: pass another table= or drop it to have it re-created",
    "42804": "the table exists with other column types: pass another table= or drop it to have it re-created",
    "42P10": "the table has no unique id: pass another table= or drop it to have it re-created",
}


def config_error(error: BaseException, doing: str) -> SinkConfigError:
    """``error`` (from psycopg) as a :class:`SinkConfigError` saying how to fix it; ``transient`` unless
    it is one no retry fixes (unknown database or role, refused login, bad connection string, missing
    privilege, a table of another shape)."""
    text = str(error).strip()
    lower = text.lower()
    state = getattr(error, "sqlstate", None) or ""
    fix = _STATE_FIXES.get(state) or _STATE_FIXES.get(state[:2])
    if fix is None:
        fix = next((f for a, b, f in _FIXES if a in lower and b in lower), None)
    if fix is None and type(error).__name__ == "ProgrammingError" and doing == "connect":
        fix = _CONNINFO
    if fix is None:
        hint = "is the server running and reachable at that host and port?" if doing == "connect" else ""
        return SinkConfigError(f"PostgresSink cannot {doing}: {text}; {hint}".rstrip("; "), transient=True)
    return SinkConfigError(f"PostgresSink cannot {doing}: {text}; {fix}")


def _is_connect_error(error: BaseException) -> bool:
    return type(error).__name__ in ("OperationalError", "ProgrammingError") and not getattr(
        error, "sqlstate", None
    )
