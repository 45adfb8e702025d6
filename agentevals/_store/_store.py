"""Opening a store by its address, and reading it back: the runs a ``SQLiteSink`` or ``PostgresSink``
wrote, as :class:`Run` objects, and which of them a scorer version already scored (for re-scoring after
the fact); connections for the other reads (:mod:`agentevals._store._reading`).

>>> import contextlib, sqlite3, tempfile, pathlib
>>> from agentevals._store._sqlite_schema import ensure_schema
>>> path = pathlib.Path(tempfile.mkdtemp()) / "scores.db"
>>> with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
...     ensure_schema(conn, TABLE, "a new store")  # what a SQLite sink does first
>>> with open_store(path) as store:
...     list(store.runs()), store.scored("exact_match", "1")
([], set())
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from agentevals._model._run import Run
from agentevals._store._dialect import Kind, dialect_of
from agentevals._store._reading import Reading
from agentevals._store._row import RUN_COLUMNS, SCHEMA_VERSION, SCHEMA_VERSION_KEY, TABLE, Tables, tables
from agentevals._store._run_row import run_from_row
from agentevals._store._schema_check import UPGRADES_FROM
from agentevals._store._table_name import check_table

_SQLITE_MAGIC = b"SQLite format 3\x00"


def is_postgres_address(address: str | os.PathLike[str]) -> bool:
    """``True`` for a ``postgresql://`` (or ``postgres://``) URL, ``False`` for a file path."""
    return isinstance(address, str) and address.startswith(("postgresql://", "postgres://"))


def display_address(address: str | os.PathLike[str]) -> str:
    """``address`` without a password, for messages and reports that are printed and shared.

    >>> display_address("postgresql://ann:s3cret@127.0.0.1/test")
    'postgresql://ann:***@127.0.0.1/test'
    """
    return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", str(address))


class Store:
    """A store opened for reading (see :func:`open_store`): its runs, newest first, and what is scored.

    The connection is closed by :meth:`close` (or leaving a ``with`` block).
    """

    def __init__(
        self,
        address: str,
        kind: Kind,
        conn: Any,
        table: str,
        *,
        database: Path | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self.address = address
        self.kind: Kind = kind
        self.table = table
        #: The SQLite file read (a JSONL store is read from a copy in a temporary SQLite file).
        self.database = database
        self.dialect = dialect_of(kind)
        self._tables = tables(table)
        self._conn = conn
        self._on_close = on_close

    @property
    def display(self) -> str:
        """The address without a password, for messages."""
        return display_address(self.address)

    @property
    def connection(self) -> Any:
        """The open DB-API connection (``sqlite3`` or ``psycopg``, autocommit)."""
        return self._conn

    @property
    def reading(self) -> Reading:
        """Reads on the store's own connection (one caller at a time)."""
        return Reading(self._conn, self.dialect, self._tables, self.display)

    @contextlib.contextmanager
    def session(self) -> Iterator[Reading]:
        """Reads on a connection of their own, closed on leaving the block (for reads run in threads
        beside this one): read-only on SQLite."""
        if self.database is not None:
            uri = f"{self.database.resolve().as_uri()}?mode=ro"
            conn: Any = sqlite3.connect(uri, uri=True, check_same_thread=False)
        else:
            import psycopg

            conn = psycopg.connect(self.address, autocommit=True, connect_timeout=10)
        try:
            yield Reading(conn, self.dialect, self._tables, self.display)
        finally:
            conn.close()

    @property
    def tables(self) -> Tables:
        """The names of this store's scores, runs and schema tables."""
        return self._tables

    def runs(
        self, *, since: datetime | None = None, entity: str | None = None, limit: int | None = None
    ) -> Iterator[Run]:
        """The stored runs, **newest first** (so ``limit=100`` is the last 100 runs): those created at
        or after ``since`` (an aware datetime; naive means UTC) and of ``entity`` when given. Read in
        chunks: a large store is never held in memory."""
        where, params = self._run_filter(since, entity, limit)
        columns = ", ".join(RUN_COLUMNS)
        sql = f"SELECT {columns} FROM {self._tables.runs}{where} ORDER BY created_at DESC, run_id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        text = self.dialect.json_as_text
        for row in self.stream(sql, params):
            yield run_from_row(dict(zip(RUN_COLUMNS, row, strict=True)), json_as_text=text)

    def stream(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple[Any, ...]]:
        """The rows of a query (written with ``?`` placeholders), fetched in chunks: on PostgreSQL
        through a server-side cursor in a transaction of its own, so a large result never sits in
        memory on either side."""
        with contextlib.ExitStack() as stack:
            if self.kind == "sqlite":
                cursor = self._conn.cursor()
            else:
                stack.enter_context(self._conn.transaction())
                cursor = self._conn.cursor(name=f"agentevals_{uuid.uuid4().hex[:8]}")
            stack.callback(cursor.close)  # before the transaction ends
            cursor.execute(self.dialect.sql(sql), list(params))
            while rows := cursor.fetchmany(500):
                yield from rows

    def count_runs(
        self, *, since: datetime | None = None, entity: str | None = None, limit: int | None = None
    ) -> int:
        """How many runs :meth:`runs` gives for the same arguments."""
        where, params = self._run_filter(since, entity, limit)
        found = int(self.reading.rows(f"SELECT COUNT(*) FROM {self._tables.runs}{where}", params)[0][0])
        return found if limit is None else min(found, limit)

    def _run_filter(
        self, since: datetime | None, entity: str | None, limit: int | None
    ) -> tuple[str, list[Any]]:
        """The ``WHERE`` clause (empty, or with a leading space) and its parameters."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise ValueError(f"limit must be a non-negative integer, got {limit!r}")
        where: list[str] = []
        params: list[Any] = []
        if since is not None:
            where.append("created_at >= ?")
            params.append(self.dialect.timestamp(since))
        if entity is not None:
            where.append("entity = ?")
            params.append(entity)
        return (" WHERE " + " AND ".join(where) if where else ""), params

    def scored(self, scorer_id: str, version: str | None) -> set[str]:
        """The ids of the runs that scorer ``scorer_id`` at ``version`` already has a record for (any
        outcome: scored, failed or skipped)."""
        same_version = "scorer_version IS NULL" if version is None else "scorer_version = ?"
        params = [scorer_id] if version is None else [scorer_id, version]
        rows = self.reading.rows(
            f"SELECT DISTINCT run_id FROM {self._tables.scores} WHERE scorer_id = ? AND {same_version}",
            params,
        )
        return {row[0] for row in rows}

    def close(self) -> None:
        self._conn.close()
        if self._on_close is not None:
            self._on_close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def open_store(address: str | os.PathLike[str], *, table: str = TABLE, read_only: bool = False) -> Store:
    """Open the store at ``address``: a SQLite file written by ``SQLiteSink``, a ``postgresql://`` URL
    (``PostgresSink``) or a ``.jsonl`` file written by ``JsonlSink`` (read from a copy in a temporary
    SQLite file, so every query works on it; a writer of it appends to the file). It is read
    without DDL, so a read-only file or role is enough, except once for a store of an older schema
    version (or one without all of this version's tables), which gains the tables of this one;
    ``read_only`` opens a SQLite file read-only. Raises ``ValueError`` saying what was expected when
    there is no store there (a missing file, a file that is not SQLite or not JSONL records, a database
    without the tables, no server) or it is not a store of this release (a development version's, or a
    newer one)."""
    check_table(table)
    if is_postgres_address(address):
        return _open_postgres(str(address), table)
    if is_jsonl_address(address):
        from agentevals._store._jsonl_read import load_jsonl

        path = Path(address)
        if not path.is_file():
            raise _expected(path, "the file does not exist" if not path.exists() else "it is not a file")
        database, cleanup = load_jsonl(path, table, problem=lambda text: _expected(path, text))
        try:
            store = _open_sqlite(database, table, read_only=True)
        except BaseException:
            cleanup()
            raise
        return Store(str(path), "sqlite", store.connection, table, database=database, on_close=cleanup)
    return _open_sqlite(Path(address), table, read_only=read_only)


def is_jsonl_address(address: str | os.PathLike[str]) -> bool:
    """``True`` for a path ending in ``.jsonl`` (a ``JsonlSink`` file)."""
    return not is_postgres_address(address) and str(address).lower().endswith(".jsonl")


def _expected(address: str | os.PathLike[str], problem: str) -> ValueError:
    return ValueError(
        f"no agentevals store at {display_address(address)!r}: {problem}; expected a SQLite file written by "
        "SQLiteSink (agentevals eval --db, or a ScoringEngine's sink), a postgresql:// URL or a .jsonl "
        "file written by JsonlSink"
    )


def _open_sqlite(path: Path, table: str, *, read_only: bool) -> Store:
    if not path.is_file():
        raise _expected(path, "the file does not exist" if not path.exists() else "it is not a file")
    with path.open("rb") as file:
        magic = file.read(len(_SQLITE_MAGIC))
    if magic and magic != _SQLITE_MAGIC:
        raise _expected(path, "it is not a SQLite database")
    try:
        _check_sqlite(path, table)
        if read_only:
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
        else:
            conn = sqlite3.connect(path, isolation_level=None, timeout=30.0, check_same_thread=False)
    except sqlite3.DatabaseError as err:
        raise _expected(path, f"it is not a SQLite database ({err})") from err
    return Store(str(path), "sqlite", conn, table, database=path)


def _check_sqlite(path: Path, table: str) -> None:
    """Check the store has its table and is this release's, with all of its tables (no DDL on a
    current one)."""
    from agentevals._store._sqlite_schema import columns, ensure_schema, stored_version

    conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
    try:
        found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,))
        if found.fetchone() is None:
            raise _expected(path, f"it has no {table!r} table")
        names = tables(table)
        version = stored_version(conn, names)
        if version != SCHEMA_VERSION or not columns(conn, names.versions):
            try:
                # raises why it cannot be used: a SinkConfigError is a ValueError
                ensure_schema(conn, table, f"store {str(path)!r}")
            except sqlite3.OperationalError as err:  # an upgrade needs to write (a read-only file)
                if version != SCHEMA_VERSION and version not in UPGRADES_FROM:
                    raise
                missing = (
                    f"has no {names.versions} table and could not be given one"
                    if version == SCHEMA_VERSION
                    else f"is of schema version {version} and could not be upgraded to {SCHEMA_VERSION}"
                )
                where = f"open it once where it can be written (agentevals report --db {path})"
                raise _expected(path, f"it {missing} ({err}); {where}") from err
    finally:
        conn.close()


def _open_postgres(url: str, table: str) -> Store:
    try:
        import psycopg
    except ImportError as err:
        raise ValueError(
            f"reading {display_address(url)} needs psycopg: pip install 'agentevals-core[postgres]'"
        ) from err
    from agentevals._support._sync import run_sync

    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as err:
        raise _expected(url, f"cannot connect ({str(err).strip()})") from err
    try:
        names = tables(table)
        found = conn.execute(
            "SELECT to_regclass(%s), to_regclass(%s), to_regclass(%s)", (table, names.meta, names.versions)
        ).fetchone()
        if found is None or found[0] is None:
            raise _expected(url, f"the database has no {table!r} table")
        version = None
        if found[1] is not None:
            stored = conn.execute(
                f"SELECT value FROM {names.meta} WHERE key = %s", (SCHEMA_VERSION_KEY,)
            ).fetchone()
            version = None if stored is None else stored[0]
        # Not this release's store, or without all of its tables: ensure_schema adds them or raises why.
        if version != str(SCHEMA_VERSION) or found[2] is None:
            run_sync(_ensure_postgres(url, table))
    except psycopg.Error as err:
        conn.close()
        raise ValueError(f"{display_address(url)}: {str(err).strip()}") from err
    except BaseException:
        conn.close()
        raise
    return Store(url, "postgres", conn, table)


async def _ensure_postgres(url: str, table: str) -> None:
    import psycopg

    from agentevals._store._postgres_schema import ensure_schema

    async with await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=10) as conn:
        await ensure_schema(conn, table, f"store {display_address(url)!r}")
