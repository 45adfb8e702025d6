"""Reading a store on one connection, and running independent reads at once.

A :class:`Reading` runs SQL written with ``?`` placeholders in its store's dialect and returns the rows
as tuples; :func:`parallel` runs read jobs in threads, each on a :class:`Reading` of its own (sqlite3
and psycopg release the GIL while a query runs, so a report's or a page's queries overlap).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, TypeVar

from agentevals._store._dialect import Dialect
from agentevals._store._row import Tables

T = TypeVar("T")


@dataclass(frozen=True)
class Reading:
    """One open connection to a store (``sqlite3`` or ``psycopg``), its dialect and its tables."""

    conn: Any
    dialect: Dialect
    tables: Tables
    #: The store, as messages name it (no password).
    display: str

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of ``sql`` (``?`` placeholders). A damaged SQLite file raises ``ValueError``."""
        cursor = self.conn.cursor()
        try:
            cursor.execute(self.dialect.sql(sql), list(params))
            return list(cursor.fetchall())
        except sqlite3.DatabaseError as err:  # a damaged file: a usage error, not a traceback
            raise ValueError(f"{self.display!r} cannot be read as an agentevals store: {err}") from err
        finally:
            cursor.close()

    def has_table(self, table: str) -> bool:
        """Whether the store has ``table`` (a table of the store may have been dropped by hand)."""
        return any(row[0] is not None for row in self.rows(self.dialect.table_lookup, [table]))


def parallel(
    jobs: Sequence[Callable[[Reading], T]],
    session: Callable[[], AbstractContextManager[Reading]],
    *,
    threads: int,
) -> list[T]:
    """``[job(reading) for job in jobs]``, run at once in up to ``threads`` threads, each job on a
    reading of its own from ``session()`` (closed when the job ends)."""

    def run(job: Callable[[Reading], T]) -> T:
        with session() as reading:
            return job(reading)

    if len(jobs) < 2 or threads < 2:
        return [run(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=min(len(jobs), threads)) as pool:
        return list(pool.map(run, jobs))


#: The source of records that judge runs scored already again (``agentevals canary``): counts and rates
#: leave them out unless asked for by source, since they would count those runs twice.
REJUDGED_SOURCE = "canary"


def source_condition(source: str | None, column: str = "source") -> tuple[str, Any]:
    """The condition on ``column`` that keeps the records of ``source``; of any source (``None``), those
    of every source but :data:`REJUDGED_SOURCE`.

    >>> source_condition(None), source_condition("canary", "s.source")
    (('source <> ?', 'canary'), ('s.source = ?', 'canary'))
    """
    if source is None:
        return (f"{column} <> ?", REJUDGED_SOURCE)
    return (f"{column} = ?", source)


def where(conditions: Sequence[tuple[str, Any]], always: Sequence[str] = ()) -> tuple[str, list[Any]]:
    """The ``WHERE`` clause (with a leading space; empty without a condition) of the ``always``
    clauses and of the ``(clause, value)`` pairs whose value is given, and the values as parameters.

    >>> where([("entity = ?", "bot"), ("source = ?", None)], always=["score IS NOT NULL"])
    (' WHERE score IS NOT NULL AND entity = ?', ['bot'])
    """
    given = [(clause, value) for clause, value in conditions if value is not None]
    clauses = [*always, *(clause for clause, _ in given)]
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), [value for _, value in given]
