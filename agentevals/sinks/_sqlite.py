"""``SQLiteSink``: the embedded default store, one file, WAL mode, batched inserts."""

from __future__ import annotations

import functools
import os
import re
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentevals._model._result import ScoreRecord, utc_now
from agentevals._store._catalog_tables import DropCount, ScorerInfo, add_drops_sql, upsert_scorers_sql
from agentevals._store._dialect import SQLITE
from agentevals._store._row import (
    COLUMNS,
    RUN_SCHEMA,
    SCHEMA,
    TABLE,
    first_per_run,
    row_json,
    run_row_json,
    run_sql_row,
    sql_row,
    tables,
    utc_text,
)
from agentevals._store._sqlite_schema import columns, ensure_schema
from agentevals._store._sqlite_writes import UNPACKS_JSON, configure_writer, insert_json_sql, insert_sql
from agentevals._store._store import display_address
from agentevals._store._table_name import check_table
from agentevals.sinks._errors import SinkConfigError, is_permanent
from agentevals.sinks._options import OnConflict, StoreRuns, check_on_conflict, check_store_runs
from agentevals.sinks._thread import Handoff, WorkerThread

_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
#: Records per ``INSERT`` statement; a batch's statements run while the next one is built.
ROWS_PER_INSERT = 100


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
    raise ValueError(
        f"SQLiteSink takes a file path, not the URL {display_address(path)!r}: for PostgreSQL use "
        'PostgresSink("postgresql://..."), for a SQLite file a path such as "agentevals.db"'
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
            found = columns(conn, self.table)
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
            configure_writer(conn)
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
        if len(records) <= ROWS_PER_INSERT or not UNPACKS_JSON:  # nothing to overlap: bind the values
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
        statement = upsert_scorers_sql(tables(self.table), SQLITE)
        await self._worker.run(lambda: self._transaction(lambda c: c.executemany(statement, rows)))

    async def write_drops(self, drops: Sequence[DropCount]) -> None:
        """Add counts of runs a ``ScoringEngine`` dropped to the drops table (one upsert per key)."""
        rows = [drop.row() for drop in drops]
        statement = add_drops_sql(tables(self.table), SQLITE)
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
