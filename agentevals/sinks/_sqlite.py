"""``SQLiteSink``: the embedded default store, one file, WAL mode, batched inserts."""

from __future__ import annotations

import functools
import os
import re
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from agentevals._model._result import ScoreRecord, utc_now
from agentevals._store._catalog_tables import DropCount, ScorerInfo, add_drops_sql, upsert_scorers_sql
from agentevals._store._row import (
    COLUMNS,
    RUN_SCHEMA,
    SCHEMA,
    TABLE,
    first_per_run,
    replace_on_conflict,
    row_json,
    run_row_json,
    run_sql_row,
    sql_row,
    tables,
    utc_text,
)
from agentevals._store._sqlite_schema import ensure_schema
from agentevals.sinks._errors import SinkConfigError, is_permanent
from agentevals.sinks._thread import Handoff, WorkerThread

#: Which runs a SQL sink stores in the runs table: each run a scorer sampled (the run of each record
#: written), every run a ``ScoringEngine`` accepted or sampled out ("all": the engine hands the
#: sampled-out ones to ``write_runs``), or none (scores only).
StoreRuns = Literal["sampled", "all", "none"]
#: What a SQL sink does with a score row whose id is stored already (the same run, scorer version and
#: evaluation): keep the stored row (a re-sent batch adds nothing), or replace it (re-scoring with
#: ``force``). Runs rows are always kept.
OnConflict = Literal["keep", "replace"]

_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# 48 characters at most: PostgreSQL cuts identifiers at 63 bytes, and index names add up to 15.
TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,47}$")
#: Words SQLite or PostgreSQL reserve: as a table name they break (or change) the statements.
_KEYWORDS = """
abort action add after all alter always analyse analyze and any array as asc asymmetric attach
autoincrement before begin between both by cascade case cast check collate column commit
conflict constraint create cross current current_catalog current_date current_role current_time
current_timestamp current_user database default deferrable deferred delete desc detach distinct
do drop each else end escape except exclude exclusive exists explain fail fetch filter first
following for foreign from full generated glob grant group groups having if ignore immediate in
index indexed initially inner insert instead intersect into is isnull join key last lateral
leading left like limit localtime localtimestamp match materialized natural no not nothing
notnull null nulls of offset on only or order others outer over partition placing plan pragma
preceding primary query raise range recursive references regexp reindex release rename replace
restrict returning right rollback row rows savepoint select session_user set some symmetric
table temp temporary then ties to trailing transaction trigger unbounded union unique update
user using vacuum values variadic view virtual when where window with without
"""
SQL_KEYWORDS = frozenset(_KEYWORDS.split())
#: Records per ``INSERT`` statement; a batch's statements run while the next one is built.
ROWS_PER_INSERT = 100
# Unpacking JSON rows needs the -> and ->> operators (SQLite 3.38); older builds bind the values.
_UNPACK_JSON = sqlite3.sqlite_version_info >= (3, 38)


def check_table(table: str) -> str:
    """``table`` if it is a safe SQL identifier, else a ``ValueError`` saying what is allowed."""
    if not isinstance(table, str) or not TABLE_NAME.match(table):
        raise ValueError(
            f"invalid table name {table!r}: use letters, digits and underscores, starting with a "
            "letter or underscore, at most 48 characters (e.g. 'agentevals_scores')"
        )
    if table.lower() in SQL_KEYWORDS or table.lower().startswith(("sqlite_", "pg_")):
        raise ValueError(
            f"invalid table name {table!r}: it is an SQL keyword or a name the database reserves; "
            f"pick another, e.g. 'agentevals_{table.lower()}'"
        )
    return table


def check_path(path: str | os.PathLike[str]) -> str | os.PathLike[str]:
    """``path`` when it is a file path; a ``ValueError`` for a URL (``postgresql://...`` is no file:
    written as one, it would become a directory ``postgresql:`` holding a SQLite file).

    >>> check_path("postgresql://127.0.0.1/test")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: SQLiteSink takes a file path, not the URL 'postgresql://127.0.0.1/test': ... PostgresSink(...
    """
    if not (isinstance(path, str) and _URL_SCHEME.match(path)):
        return path
    url = re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", str(path))  # no password in the message
    raise ValueError(
        f"SQLiteSink takes a file path, not the URL {url!r}: for PostgreSQL use "
        'PostgresSink("postgresql://..."), for a SQLite file a path such as "agentevals.db"'
    )


def check_on_conflict(on_conflict: str) -> OnConflict:
    if on_conflict == "keep":
        return "keep"
    if on_conflict == "replace":
        return "replace"
    raise ValueError(
        f"on_conflict must be 'keep' (a re-sent record adds nothing) or 'replace' (it replaces the stored "
        f"row), not {on_conflict!r}"
    )


def check_store_runs(store_runs: str) -> StoreRuns:
    if store_runs == "sampled":
        return "sampled"
    if store_runs == "all":
        return "all"
    if store_runs == "none":
        return "none"
    raise ValueError(
        f"store_runs must be 'sampled' (each scored run), 'all' (every run, scored or not) or 'none', "
        f"not {store_runs!r}"
    )


class SQLiteSink:
    """Writes records to ``table`` in the SQLite file at ``path`` (created with its schema on first use,
    a store of another release refused), and each record's run, once, to the runs table beside it
    (``agentevals_runs``; ``store_runs="none"``: scores only).

    Each batch is one transaction of ``INSERT OR IGNORE`` (runs, then scores); with
    ``on_conflict="replace"`` a score row replaces the stored row of the same id (``ON CONFLICT (id) DO
    UPDATE``: what ``rescore(..., force=True)`` uses). Batches over
    ``ROWS_PER_INSERT`` records go in statements of that many rows, each row passed as one JSON array
    that SQLite unpacks: while one statement runs on a second thread (``sqlite3`` releases the GIL),
    the sink's thread builds the next.
    ``created_at`` is ISO-8601 UTC text; JSON columns hold JSON text (query them with ``json_extract``).

    >>> sink = SQLiteSink("agentevals.db")
    >>> sink.table
    'agentevals_scores'
    """

    name = "sqlite"

    def __init__(
        self,
        path: str | os.PathLike[str] = "agentevals.db",
        *,
        table: str = TABLE,
        store_runs: StoreRuns = "sampled",
        on_conflict: OnConflict = "keep",
    ) -> None:
        self.path = Path(check_path(path))
        self.table = check_table(table)
        self.runs_table = tables(self.table).runs
        self.store_runs = check_store_runs(store_runs)
        self.on_conflict = check_on_conflict(on_conflict)
        self._conn: sqlite3.Connection | None = None
        self._worker = WorkerThread(f"agentevals-sink-sqlite-{self.path.name}")
        self._inserter = Handoff(f"agentevals-sink-sqlite-insert-{self.path.name}")

    def check(self) -> None:
        """Verify the configuration before any write: the file can be created or opened and written,
        and the table exists with the expected columns or can be created. Raises
        :class:`~agentevals.sinks.SinkConfigError` saying how to fix it.

        >>> import tempfile, pathlib
        >>> SQLiteSink(pathlib.Path(tempfile.mkdtemp()) / "scores.db").check()
        """
        conn = self._open(timeout=2.0)
        try:
            found = {row[1] for row in conn.execute(f"PRAGMA table_info({self.table})")}
            missing = [column for column in COLUMNS if column not in found]
            if missing:
                raise SinkConfigError(
                    f"SQLiteSink: table {self.table!r} in {self.path} exists without the column(s) "
                    f"{', '.join(missing)}: it was made by something else; pass another table= or path"
                )
            try:
                conn.execute("BEGIN IMMEDIATE")  # takes the write lock: the file is writable
                conn.execute("ROLLBACK")
            except sqlite3.OperationalError as err:
                if is_permanent(err):
                    raise self._config_error(err) from err
                # Busy or locked: another writer holds it now, which a retry waits out.
        finally:
            conn.close()

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def _open(self, timeout: float = 30.0) -> sqlite3.Connection:
        """A configured connection with the table created; a :class:`SinkConfigError` if the file can
        never be written (other errors are raised as they are, for a retry)."""
        try:
            if self.path.parent != Path():
                self.path.parent.mkdir(parents=True, exist_ok=True)
            # Used by the sink's thread and the inserting thread, never by both at once.
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=timeout, check_same_thread=False)
        except (OSError, sqlite3.Error) as err:
            if not is_permanent(err):
                raise
            raise self._config_error(err) from err
        try:
            conn.execute("PRAGMA page_size=16384")  # new files only: far fewer page splits than 4 KiB
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA cache_size=-16384")  # 16 MiB: keeps the indexes' hot pages cached
            conn.execute("PRAGMA wal_autocheckpoint=2500")  # fewer, larger checkpoints (WAL <= ~40 MiB)
            ensure_schema(conn, self.table, f"SQLiteSink: {self.path}")
        except BaseException as err:
            conn.close()
            if isinstance(err, sqlite3.Error) and is_permanent(err):
                raise self._config_error(err) from err
            if isinstance(err, sqlite3.OperationalError) and "no such column" in str(err):
                raise SinkConfigError(
                    f"SQLiteSink: table {self.table!r} in {self.path} exists with other columns ({err}): "
                    "it was made by something else; pass another table= or path"
                ) from err
            raise
        return conn

    def _config_error(self, error: BaseException) -> SinkConfigError:
        return SinkConfigError(
            f"SQLiteSink cannot write {str(self.path)!r}: {type(error).__name__}: {error}; pass a path in "
            "a directory this process can write (e.g. SQLiteSink('agentevals.db')), or fix its permissions"
        )

    def _write_records(self, records: Sequence[ScoreRecord]) -> None:
        # Runs on the sink's thread, so the engine's loop stays free for scoring.
        conn = self._connect()
        conn.execute("BEGIN")
        try:
            self._insert(conn, records)
        except BaseException:
            if conn.in_transaction:  # some errors (disk full, I/O) already rolled it back
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _insert(self, conn: sqlite3.Connection, records: Sequence[ScoreRecord]) -> None:
        runs = first_per_run(records) if self.store_runs != "none" else []
        if len(records) <= ROWS_PER_INSERT or not _UNPACK_JSON:  # nothing to overlap: bind the values
            if runs:
                self._bind(conn, runs, self._runs)()
            self._bind(conn, records, self._scores)()
            return
        try:
            for start in range(0, len(runs), ROWS_PER_INSERT):
                self._inserter.submit(self._run_statement(conn, runs[start : start + ROWS_PER_INSERT]))
            for start in range(0, len(records), ROWS_PER_INSERT):
                self._inserter.submit(self._statement(conn, records[start : start + ROWS_PER_INSERT]))
        finally:
            self._inserter.join()  # also before a rollback, if building a row failed

    @property
    def _scores(self) -> _Table:
        return _Table(self.table, SCHEMA, row_json, sql_row, replace=self.on_conflict == "replace")

    @property
    def _runs(self) -> _Table:
        return _Table(self.runs_table, RUN_SCHEMA, run_row_json, run_sql_row, replace=False)

    def _statement(self, conn: sqlite3.Connection, records: Sequence[ScoreRecord]) -> Callable[[], object]:
        """The insert of the score rows of ``records``, ready to run: one statement, run by SQLite
        without the GIL (rows with U+0000 are bound instead)."""
        return self._json_statement(conn, records, self._scores)

    def _run_statement(
        self, conn: sqlite3.Connection, records: Sequence[ScoreRecord]
    ) -> Callable[[], object]:
        """The insert of the runs of ``records`` (one record per run), as :meth:`_statement`."""
        return self._json_statement(conn, records, self._runs)

    def _json_statement(
        self, conn: sqlite3.Connection, records: Sequence[ScoreRecord], table: _Table
    ) -> Callable[[], object]:
        rows = [table.json_row(record) for record in records]
        if any("\\u0000" in row for row in rows):  # ->> would cut text at an escaped U+0000
            return self._bind(conn, records, table)
        statement = insert_json_sql(table.name, len(rows), table.schema, replace=table.replace)
        return functools.partial(conn.execute, statement, rows)

    def _bind(
        self, conn: sqlite3.Connection, records: Sequence[ScoreRecord], table: _Table
    ) -> Callable[[], object]:
        rows = [table.sql_row(r) for r in records]
        return functools.partial(
            conn.executemany, insert_sql(table.name, table.schema, replace=table.replace), rows
        )

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        batch = list(records)
        await self._worker.run(lambda: self._write_records(batch))

    async def write_runs(self, records: Sequence[ScoreRecord]) -> None:
        """Store the runs of ``records`` and not their scores: a ``ScoringEngine`` passes the runs no
        scorer sampled this way when ``store_runs="all"``."""
        runs = first_per_run(records)
        await self._worker.run(lambda: self._write_runs(runs))

    def _write_runs(self, runs: Sequence[ScoreRecord]) -> None:
        self._transaction(lambda conn: self._bind(conn, runs, self._runs)())

    async def write_scorers(self, scorers: Sequence[ScorerInfo]) -> None:
        """Store each scorer's name, version and pass threshold in the scorers table (a
        ``ScoringEngine`` and ``run_evals`` call it when they start; see ``_catalog_tables``)."""
        now = utc_text(utc_now())
        rows = [info.row(now) for info in scorers]
        statement = upsert_scorers_sql(tables(self.table), "?")
        await self._worker.run(lambda: self._transaction(lambda c: c.executemany(statement, rows)))

    async def write_drops(self, drops: Sequence[DropCount]) -> None:
        """Add counts of runs a ``ScoringEngine`` dropped to the drops table (one upsert per key)."""
        rows = [drop.row() for drop in drops]
        statement = add_drops_sql(tables(self.table), "?")
        await self._worker.run(lambda: self._transaction(lambda c: c.executemany(statement, rows)))

    def _transaction(self, work: Callable[[sqlite3.Connection], object]) -> None:
        """``work(conn)`` in one transaction (on the sink's thread)."""
        conn = self._connect()
        conn.execute("BEGIN")
        try:
            work(conn)
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    async def close(self) -> None:
        def close_conn() -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        await self._worker.run(close_conn)
        self._inserter.stop()
        self._worker.stop()


class _Table:
    """A table the sink writes and how a record becomes its row."""

    __slots__ = ("json_row", "name", "replace", "schema", "sql_row")

    def __init__(
        self,
        name: str,
        schema: tuple[tuple[str, str], ...],
        json_row: Callable[[ScoreRecord], str],
        sql_row: Callable[[ScoreRecord], tuple[Any, ...]],
        *,
        replace: bool,
    ) -> None:
        self.name, self.schema, self.json_row, self.sql_row = name, schema, json_row, sql_row
        self.replace = replace  # a row replaces the stored row of its id (else the stored row is kept)


@functools.lru_cache(maxsize=256)
def insert_json_sql(
    table: str, rows: int, schema: tuple[tuple[str, str], ...] = SCHEMA, *, replace: bool = False
) -> str:
    """``INSERT OR IGNORE`` of ``rows`` rows, each one parameter: its JSON array (:func:`row_json`);
    ``replace``: an upsert on ``id`` instead."""
    values = ", ".join(_unpack_sql(i, kind) for i, (_, kind) in enumerate(schema))
    params = ", ".join(["(?)"] * rows)
    columns = ", ".join(name for name, _ in schema)
    select = f"WITH r(j) AS MATERIALIZED (VALUES {params}) SELECT {values} FROM r"
    if replace:  # "WHERE true": SQLite would read ON CONFLICT as a join's ON without it
        return f"INSERT INTO {table} ({columns}) {select} WHERE true {replace_on_conflict(schema)}"
    return f"INSERT OR IGNORE INTO {table} ({columns}) {select}"


def _unpack_sql(index: int, kind: str) -> str:
    # A path string, not an integer, which SQLite would format into a path for every row and column.
    path = f"'$[{index}]'"
    return f"NULLIF(j->{path}, 'null')" if kind == "json" else f"j->>{path}"


@functools.lru_cache(maxsize=64)
def insert_sql(table: str, schema: tuple[tuple[str, str], ...] = SCHEMA, *, replace: bool = False) -> str:
    """``INSERT OR IGNORE`` of one row of ``schema``'s columns (``replace``: an upsert on ``id``)."""
    columns = [name for name, _ in schema]
    values = f"({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
    if replace:
        return f"INSERT INTO {table} {values} {replace_on_conflict(schema)}"
    return f"INSERT OR IGNORE INTO {table} {values}"
