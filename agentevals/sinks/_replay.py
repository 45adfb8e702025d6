"""``replay``: re-send a dead-letter file to a sink, removing what was delivered."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from agentevals._result import ScoreRecord
from agentevals._sync import run_sync
from agentevals.sinks._jsonl import path_lock
from agentevals.sinks._protocol import as_sink
from agentevals.sinks._row import record_from_json

logger = logging.getLogger("agentevals.sinks")


async def areplay(
    path: str | os.PathLike[str], sink: Any, *, batch_size: int = 500, only_sink: str | None = None
) -> int:
    """Async :func:`replay`."""
    target = as_sink(sink)
    file = Path(path)
    if not file.exists():
        return 0
    with path_lock(file):
        lines = file.read_text(encoding="utf-8").splitlines()
    keep: list[str] = []
    pending: list[tuple[str, ScoreRecord]] = []
    delivered = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            if only_sink is not None and entry.get("sink") != only_sink:
                keep.append(line)
                continue
            pending.append((line, record_from_json(entry["record"])))
        except (ValueError, KeyError, TypeError) as err:
            logger.warning("dead-letter line kept, it could not be read: %s", err)
            keep.append(line)
    failed = False
    for start in range(0, len(pending), batch_size):
        chunk = pending[start : start + batch_size]
        if not failed:
            try:
                await target.write([record for _, record in chunk])
                delivered += len(chunk)
                continue
            except Exception as err:
                failed = True
                logger.warning("replay stopped: the sink failed (%s: %s)", type(err).__name__, err)
        keep.extend(line for line, _ in chunk)
    _rewrite(file, lines_before=len(lines), keep=keep)
    return delivered


def replay(
    path: str | os.PathLike[str], sink: Any, *, batch_size: int = 500, only_sink: str | None = None
) -> int:
    """Re-send the records in the dead-letter file ``path`` to ``sink``; returns how many were delivered.

    Delivered records are removed from the file (it is deleted when empty); records from a batch the
    sink rejects stay, so replay can simply be run again. ``only_sink`` limits it to records that a sink
    of that name (e.g. ``"sqlite"``) failed to take. Writes are idempotent for the SQL sinks.

    >>> from agentevals.sinks import MemorySink
    >>> replay("no-such-deadletter.jsonl", MemorySink())
    0
    """
    return run_sync(areplay(path, sink, batch_size=batch_size, only_sink=only_sink))


def _rewrite(file: Path, *, lines_before: int, keep: list[str]) -> None:
    with path_lock(file):
        # Lines appended while we were sending belong to a later failure: keep them too.
        current = file.read_text(encoding="utf-8").splitlines() if file.exists() else []
        keep = keep + current[lines_before:]
        if not keep:
            file.unlink(missing_ok=True)
            return
        tmp = file.with_name(file.name + ".tmp")
        tmp.write_text("".join(line + "\n" for line in keep), encoding="utf-8")
        os.replace(tmp, file)
