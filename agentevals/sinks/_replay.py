"""``replay``: re-send a dead-letter file to a sink, removing what was delivered."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentevals._model._result import ScoreRecord
from agentevals._store._row import record_from_json
from agentevals._support._sync import run_sync
from agentevals.sinks._jsonl import path_lock
from agentevals.sinks._protocol import as_sink

logger = logging.getLogger("agentevals.sinks")


@dataclass
class ReplayOutcome:
    """What a replay did: records ``delivered``, records ``undelivered`` (kept: the sink failed) and the
    lines it could not read (kept), as ``(line number, why)``."""

    delivered: int = 0
    undelivered: int = 0
    unread: list[tuple[int, str]] = field(default_factory=list)


async def replay_file(
    path: str | os.PathLike[str], sink: Any, *, batch_size: int = 500, only_sink: str | None = None
) -> ReplayOutcome:
    """:func:`replay`, saying what it could not deliver or read."""
    target = as_sink(sink)
    file = Path(path)
    outcome = ReplayOutcome()
    if not file.exists():
        return outcome
    with path_lock(file):
        lines = file.read_text(encoding="utf-8").splitlines()
    keep: list[str] = []
    pending: list[tuple[str, ScoreRecord]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            if only_sink is not None and entry.get("sink") != only_sink:
                keep.append(line)
                continue
            pending.append((line, _record(entry)))
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            why = f"{type(err).__name__}: {err}" if isinstance(err, KeyError) else str(err)
            logger.warning("dead-letter line %d of %s kept, it could not be read: %s", number, file, why)
            outcome.unread.append((number, why))
            keep.append(line)
    failed = False
    for start in range(0, len(pending), batch_size):
        chunk = pending[start : start + batch_size]
        if not failed:
            try:
                await target.write([record for _, record in chunk])
                outcome.delivered += len(chunk)
                continue
            except Exception as err:
                failed = True
                logger.warning("replay stopped: the sink failed (%s: %s)", type(err).__name__, err)
        keep.extend(line for line, _ in chunk)
        outcome.undelivered += len(chunk)
    rewrite_kept(file, lines_before=len(lines), keep=keep)
    return outcome


def _record(entry: Any) -> ScoreRecord:
    """The score record of a dead-letter line's JSON data; a ``ValueError`` saying what else it is."""
    if isinstance(entry, dict) and "run_entry" in entry and "record" not in entry:
        run = (
            entry["run_entry"].get("run", {}).get("run_id") if isinstance(entry["run_entry"], dict) else None
        )
        raise ValueError(
            f"a run the broker refused (run {run!r}: {entry.get('error')}), not a score record; it goes to "
            "a broker, not a store: fix the cause, then publish it with "
            "`agentevals replay FILE --broker URL`"
        )
    if not isinstance(entry, dict) or "record" not in entry:
        raise ValueError("not a dead-letter line of agentevals: a JSON object with a 'record' expected")
    return record_from_json(entry["record"])


async def areplay(
    path: str | os.PathLike[str], sink: Any, *, batch_size: int = 500, only_sink: str | None = None
) -> int:
    """Async :func:`replay`."""
    return (await replay_file(path, sink, batch_size=batch_size, only_sink=only_sink)).delivered


def replay(
    path: str | os.PathLike[str], sink: Any, *, batch_size: int = 500, only_sink: str | None = None
) -> int:
    """Re-send the records in the dead-letter file ``path`` to ``sink``; returns how many were delivered.

    Delivered records are removed from the file (it is deleted when empty); records from a batch the
    sink rejects stay, so replay can simply be run again, as do lines that are not score records (each
    logged at WARNING with its line number). ``only_sink`` limits it to records that a sink
    of that name (e.g. ``"sqlite"``) failed to take. Writes are idempotent for the SQL sinks.

    >>> from agentevals.sinks import MemorySink
    >>> replay("no-such-deadletter.jsonl", MemorySink())
    0
    """
    return run_sync(areplay(path, sink, batch_size=batch_size, only_sink=only_sink))


def rewrite_kept(file: Path, *, lines_before: int, keep: list[str]) -> None:
    """Leave ``keep`` in ``file`` (deleted when nothing is left), with the lines appended meanwhile."""
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
