"""``JsonlSink``: append one JSON object per record to a file."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from agentevals._model._result import ScoreRecord
from agentevals._store._row import record_to_row, run_to_row
from agentevals.sinks._errors import SinkConfigError, is_permanent
from agentevals.sinks._thread import WorkerThread

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def path_lock(path: Path) -> threading.Lock:
    """One lock per resolved path in this process, so appends from many sinks/threads never interleave."""
    key = str(path.resolve())
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


def append_lines(path: Path, lines: Sequence[str]) -> None:
    """Append whole lines under the path's lock with one write (and fsync-free flush)."""
    if not lines:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    with path_lock(path):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)


class JsonlSink:
    """Appends one JSON object per record: the columns of its scores row, and its run's row inline
    under ``"run"`` (the columns of the runs table), JSON columns as objects. Append-only.

    Safe across threads and sinks sharing a path (one lock per path, one ``O_APPEND`` write per batch).

    >>> sink = JsonlSink("scores.jsonl")
    >>> sink.path.name
    'scores.jsonl'
    """

    name = "jsonl"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._worker = WorkerThread("agentevals-sink-jsonl")

    def check(self) -> None:
        """Verify the path can be appended to (its directory is created if missing, as a write would);
        raises :class:`~agentevals.sinks.SinkConfigError` saying how to fix it.

        >>> import tempfile, pathlib
        >>> JsonlSink(pathlib.Path(tempfile.mkdtemp()) / "scores.jsonl").check()
        """
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with path_lock(self.path):  # a file made here is removed before anyone appends to it
                existed = self.path.exists()
                os.close(os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644))
                if not existed:
                    self.path.unlink()
        except OSError as err:
            raise self._config_error(err) from err

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        batch = list(records)
        try:
            await self._worker.run(lambda: append_lines(self.path, [_line(r) for r in batch]))
        except OSError as err:
            if not is_permanent(err):
                raise
            raise self._config_error(err) from err

    def _config_error(self, error: OSError) -> SinkConfigError:
        return SinkConfigError(
            f"JsonlSink cannot append to {str(self.path)!r}: {type(error).__name__}: {error}; pass a path "
            "in a directory this process can write, or fix its permissions"
        )

    async def close(self) -> None:
        self._worker.stop()


def _line(record: ScoreRecord) -> str:
    row = record_to_row(record, json_as_text=False)
    row["created_at"] = row["created_at"].isoformat()
    run = run_to_row(record, json_as_text=False)
    run["created_at"] = run["created_at"].isoformat()
    if run["started_at"] is not None:
        run["started_at"] = run["started_at"].isoformat()
    row["run"] = run
    return json.dumps(row, ensure_ascii=False, separators=(",", ":"))
