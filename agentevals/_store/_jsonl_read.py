"""A ``.jsonl`` file written by ``JsonlSink`` read as a store: its lines (a scores row, the run's row inline
under ``"run"``) are copied into a temporary SQLite file with the store's schema, so ``report``, ``export``
and ``rescore`` run the same SQL on it. The file itself is only read (streamed, line by line)."""

from __future__ import annotations

import functools
import json
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agentevals._store._row import RUN_SCHEMA, SCHEMA, json_text, tables
from agentevals._store._sqlite_schema import ensure_schema
from agentevals._store._sqlite_writes import insert_sql

#: Lines inserted per ``executemany``.
BATCH = 1000
#: The fields a line must have to be a record (a dead-letter line, for one, has none of them).
_REQUIRED = ("id", "run_id", "scorer_id", "created_at")


def load_jsonl(
    path: Path, table: str, *, problem: Callable[[str], ValueError]
) -> tuple[Path, Callable[[], None]]:
    """Copy the records of ``path`` into a new temporary SQLite store whose scores table is ``table``;
    return its file and the function that removes it. A line that is not a ``JsonlSink`` record raises
    ``problem(what is wrong)``."""
    directory = Path(tempfile.mkdtemp(prefix="agentevals-jsonl-"))
    cleanup = functools.partial(shutil.rmtree, directory, ignore_errors=True)
    database = directory / "store.db"
    try:
        conn = sqlite3.connect(database, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=OFF")  # a scratch copy: nothing to recover
            ensure_schema(conn, table, f"copy of {str(path)!r}")
            conn.execute("BEGIN")
            _copy(path, conn, table, problem)
            conn.execute("COMMIT")
        finally:
            conn.close()
    except BaseException:
        cleanup()
        raise
    return database, cleanup


def _copy(path: Path, conn: sqlite3.Connection, table: str, problem: Callable[[str], ValueError]) -> None:
    names = tables(table)
    insert_scores, insert_runs = insert_sql(table, SCHEMA), insert_sql(names.runs, RUN_SCHEMA)
    scores: list[tuple[Any, ...]] = []
    runs: list[tuple[Any, ...]] = []
    with path.open(encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                missing = [name for name in _REQUIRED if not isinstance(data, Mapping) or name not in data]
                if missing:
                    raise ValueError(f"no {', '.join(missing)}")
                scores.append(_values(data, SCHEMA))
                if isinstance(data.get("run"), Mapping):
                    runs.append(_values(data["run"], RUN_SCHEMA))
            except ValueError as err:  # JSON errors included
                raise problem(f"line {number} is not a record written by JsonlSink ({err})") from err
            if len(scores) >= BATCH:
                _flush(conn, insert_runs, runs, insert_scores, scores)
    _flush(conn, insert_runs, runs, insert_scores, scores)


def _values(data: Mapping[str, Any], schema: tuple[tuple[str, str], ...]) -> tuple[Any, ...]:
    """A row in ``schema``'s column order: JSON columns as JSON text, a missing column as NULL."""
    return tuple(json_text(data.get(name)) if kind == "json" else data.get(name) for name, kind in schema)


def _flush(
    conn: sqlite3.Connection,
    insert_runs: str,
    runs: list[tuple[Any, ...]],
    insert_scores: str,
    scores: list[tuple[Any, ...]],
) -> None:
    conn.executemany(insert_runs, runs)  # runs first, as the sinks write them
    conn.executemany(insert_scores, scores)
    runs.clear()
    scores.clear()
