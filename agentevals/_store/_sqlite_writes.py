"""The statements that write score and runs rows into a SQLite store, and the settings of a writing
connection.

A row is either bound value by value (:func:`insert_sql`, one ``executemany``) or passed as one JSON
array that SQLite unpacks (:func:`insert_json_sql`: a statement of many rows, run without the GIL).
"""

from __future__ import annotations

import functools
import sqlite3

from agentevals._store._row import SCHEMA, replace_on_conflict

#: Whether this SQLite unpacks JSON rows: the ``->`` and ``->>`` operators came in SQLite 3.38; older
#: builds bind the values.
UNPACKS_JSON = sqlite3.sqlite_version_info >= (3, 38)
_WRITER_PRAGMAS = (
    "PRAGMA page_size=16384",  # new files only: far fewer page splits than 4 KiB
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA cache_size=-16384",  # 16 MiB: keeps the indexes' hot pages cached
    "PRAGMA wal_autocheckpoint=2500",  # fewer, larger checkpoints (WAL <= ~40 MiB)
)


def configure_writer(conn: sqlite3.Connection) -> None:
    """Set up ``conn`` to write a store: WAL journal, large pages and cache."""
    for pragma in _WRITER_PRAGMAS:
        conn.execute(pragma)


@functools.lru_cache(maxsize=64)
def insert_sql(table: str, schema: tuple[tuple[str, str], ...] = SCHEMA, *, replace: bool = False) -> str:
    """``INSERT OR IGNORE`` of one row of ``schema``'s columns (``replace``: an upsert on ``id``).

    >>> insert_sql("t", (("id", "text"), ("score", "real")))
    'INSERT OR IGNORE INTO t (id, score) VALUES (?, ?)'
    """
    columns = [name for name, _ in schema]
    values = f"({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
    if replace:
        return f"INSERT INTO {table} {values} {replace_on_conflict(schema)}"
    return f"INSERT OR IGNORE INTO {table} {values}"


@functools.lru_cache(maxsize=256)
def insert_json_sql(
    table: str, rows: int, schema: tuple[tuple[str, str], ...] = SCHEMA, *, replace: bool = False
) -> str:
    """``INSERT OR IGNORE`` of ``rows`` rows, each one parameter: its JSON array (``_row.row_json``);
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
