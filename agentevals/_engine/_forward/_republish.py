"""Publishing again the runs a broker refused (the ``run_entry`` lines of a dead-letter file), once their
cause is fixed (e.g. RabbitMQ's ``max_message_size`` raised): ``agentevals replay FILE --broker URL``."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentevals._engine._forward._broker import enqueue, make_broker
from agentevals._engine._forward._codec import PACK_OVER, batch_text, packed_text
from agentevals.sinks._jsonl import path_lock
from agentevals.sinks._replay import rewrite_kept

logger = logging.getLogger("agentevals.engine")


@dataclass(frozen=True)
class Republished:
    """What :func:`republish` did: runs ``published``; ``kept``: run lines left in the file because the
    broker failed (``error`` says how)."""

    published: int
    kept: int
    error: str | None = None


def republish(path: str | Path, url: str, *, queue: str | None = None) -> Republished:
    """Publish each run line of the dead-letter file ``path`` through the broker at ``url`` to the queue
    it was refused on (or ``queue``), removing it from the file once the broker confirmed it; the other
    lines stay. Stops at the first failure (the rest stay too). A ``ValueError`` for an unusable URL."""
    file = Path(path)
    broker = make_broker(url)
    with path_lock(file):
        lines = file.read_text(encoding="utf-8").splitlines()
    keep: list[str] = []
    published, error = 0, None
    try:
        for line in lines:
            entry = _run_line(line)
            if entry is None or error is not None:
                keep.append(line)
                continue
            try:
                _publish(broker, queue or str(entry.get("queue") or "agentevals"), entry["run_entry"])
            except Exception as err:
                error = f"{type(err).__name__}: {err}"
                keep.append(line)
                continue
            published += 1
    finally:
        broker.close()
    rewrite_kept(file, lines_before=len(lines), keep=keep)
    return Republished(published, sum(1 for line in keep if _run_line(line) is not None), error)


def _run_line(line: str) -> dict[str, Any] | None:
    """The JSON data of a run line (one the forwarder wrote), else ``None``."""
    try:
        entry = json.loads(line)
    except ValueError:
        return None
    if isinstance(entry, dict) and isinstance(entry.get("run_entry"), dict):
        return entry
    return None


def _publish(broker: Any, queue: str, run_entry: dict[str, Any]) -> None:
    text = batch_text([json.dumps(run_entry, ensure_ascii=False, separators=(",", ":"))])
    enqueue(broker, queue, packed_text(text) if len(text) > PACK_OVER else text)
