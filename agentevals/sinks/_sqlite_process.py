"""``SQLiteProcessWriter``: score rows written into an existing SQLite store by a child process, for bulk
work (``rescore``) where SQLite's own work (the row and five index B-trees) is as large as the scoring of
fast scorers (see benchmarks/README.md): in a thread it competes with the scoring for the GIL and one
core; in a child process it runs on the other core. The parent only builds each row's values and pickles
them.

Each ``write`` is one transaction in the child (``INSERT OR IGNORE``, or an upsert on ``id`` with
``replace``); its outcome comes back on a pipe, so a failed batch raises in ``write`` as a sink's would.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from agentevals._model._result import ScoreRecord
from agentevals._store._row import SCHEMA, sql_row
from agentevals._store._sqlite_writes import insert_sql
from agentevals._store._table_name import check_table

_CHILD = str(Path(__file__).with_name("_sqlite_child.py"))  # run by path: no package import


class SQLiteProcessWriter:
    """Writes the score rows of records (no runs rows) to ``table`` of the SQLite store at ``path`` from a
    child process; the store must exist (``open_store`` checked it)."""

    name = "sqlite"

    def __init__(self, path: str | os.PathLike[str], *, table: str, replace: bool = False) -> None:
        self.path = Path(path)
        self.table = check_table(table)
        self._sql = insert_sql(self.table, SCHEMA, replace=replace)
        self._child: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()  # one batch on the pipe at a time

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        rows = [sql_row(record) for record in records]
        if rows:
            await asyncio.to_thread(self._send, pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL))

    def _send(self, frame: bytes) -> None:
        with self._lock:
            child = self._start()
            stdin, stdout = _pipes(child)
            try:
                stdin.write(len(frame).to_bytes(8, "little"))
                stdin.write(frame)
                stdin.flush()
                answer = stdout.readline().decode(errors="replace").strip()
            except OSError as err:  # the child is gone
                answer = f"the writing process ended ({err})"
            if answer != "ok":
                if child.poll() is not None:
                    self._child = None
                raise RuntimeError(f"SQLite store {str(self.path)!r}: the batch was not written: {answer}")

    def _start(self) -> subprocess.Popen[bytes]:
        if self._child is None or self._child.poll() is not None:
            self._child = subprocess.Popen(
                [sys.executable, "-I", _CHILD, str(self.path), self._sql],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        return self._child

    async def close(self) -> None:
        await asyncio.to_thread(self._stop)

    def _stop(self) -> None:
        with self._lock:
            child, self._child = self._child, None
        if child is not None:
            _pipes(child)[0].close()  # the child ends at the end of its input
            child.wait()
            _pipes(child)[1].close()


def _pipes(child: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes]]:
    assert child.stdin is not None and child.stdout is not None
    return child.stdin, child.stdout
