"""Retrying a sink with backoff, and the dead-letter file for batches that still cannot be written."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from agentevals._model._result import ScoreRecord
from agentevals._store._row import record_to_json
from agentevals._support._sync import really_cancelled
from agentevals.sinks._errors import is_permanent
from agentevals.sinks._jsonl import append_lines
from agentevals.sinks._protocol import Sink, sink_name
from agentevals.sinks._sanitize import sanitized
from agentevals.sinks._thread import WorkerThread

logger = logging.getLogger("agentevals.sinks")

DEFAULT_DEAD_LETTER = "agentevals-deadletter.jsonl"


@dataclass(frozen=True)
class RetryPolicy:
    """How often a failing sink write is tried (``attempts`` in all), the exponential backoff bounds,
    and ``timeout``: seconds one attempt may take before it counts as failed (a hung store must not
    stall the engine; ``None`` waits forever).

    >>> RetryPolicy(attempts=3, initial=0.01, max_wait=0.1).attempts
    3
    """

    attempts: int = 5
    initial: float = 0.2
    max_wait: float = 5.0
    timeout: float | None = 30.0

    def __post_init__(self) -> None:
        if isinstance(self.attempts, bool) or not isinstance(self.attempts, int) or self.attempts < 1:
            raise ValueError(
                "RetryPolicy.attempts must be a whole number of tries, at least 1 (e.g. 5), "
                f"got {self.attempts!r}"
            )
        for name in ("initial", "max_wait"):
            value = getattr(self, name)
            if not is_number(value) or not math.isfinite(value) or value < 0:
                raise ValueError(f"RetryPolicy.{name} must be a finite number of seconds >= 0, got {value!r}")
        if self.timeout is not None and not (
            is_number(self.timeout) and math.isfinite(self.timeout) and self.timeout > 0
        ):
            raise ValueError(
                "RetryPolicy.timeout must be a positive, finite number of seconds or None, "
                f"got {self.timeout!r}"
            )

    def backoff(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        return float(min(self.max_wait, self.initial * 2 ** (attempt - 1)))


def is_number(value: object) -> bool:
    """A real number of seconds: an int or float, not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


async def write_once(sink: Sink, records: Sequence[ScoreRecord], timeout: float | None) -> None:
    """One write attempt under ``timeout``."""
    async with asyncio.timeout(timeout):
        await sink.write(records)


async def retried(
    attempt: Callable[[], Awaitable[None]],
    policy: RetryPolicy,
    on_error: Callable[[BaseException], None] | None = None,
) -> BaseException | None:
    """Await ``attempt()`` until it returns, per ``policy``; the last error if every attempt failed.

    A plain loop, not a retry library: the first attempt is the hot path and costs only the call
    itself. Before attempt ``n + 1`` it waits ``initial * 2**(n - 1)``, capped at ``max_wait``;
    ``on_error`` sees every failed attempt. Any exception counts as a failed attempt, ``BaseException``
    too, except the cancellation of the calling task; a permanent error
    (:func:`~agentevals.sinks.is_permanent`) ends the attempts at once. The engine's record batches have
    a loop of their own (only the failed part of a partial write is retried, unstorable values are
    replaced, a record that fails alone is isolated from its batch).
    """
    number = 1
    while True:
        try:
            await attempt()
            return None
        except BaseException as err:
            if really_cancelled(err):
                raise
            error = err
        if on_error is not None:
            on_error(error)
        if is_permanent(error) or number >= policy.attempts:
            return error
        await asyncio.sleep(policy.backoff(number))
        number += 1


class DeadLetter:
    """An append-only JSONL file of records a sink could not take; re-send them with ``replay``.

    Each line: ``{"sink": name, "error": "Type: message", "failed_at": iso, "record": {...}}``.

    >>> DeadLetter("dead.jsonl").path.name
    'dead.jsonl'
    """

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_DEAD_LETTER) -> None:
        self.path = Path(path)
        self._worker = WorkerThread("agentevals-deadletter")
        self._reported: set[tuple[str, str]] = set()  # permanent failures already logged at ERROR

    async def write(self, records: Sequence[ScoreRecord], sink: Sink, error: BaseException) -> int:
        """Append ``records`` (blocking I/O on a private thread); logs the path at WARNING, or, for a
        permanent error (:func:`~agentevals.sinks.is_permanent`), at ERROR with the error's fix (once
        per sink and error; later batches failing the same way at WARNING).

        A record that cannot be serialized is first made storable (:func:`sanitized`); one that still
        cannot is left out and logged. Returns how many were left out; raises if the file cannot be
        written (then none of them is in it).
        """
        now = datetime.now(UTC).isoformat()
        reason = f"{type(error).__name__}: {error}"
        name = sink_name(sink)
        lines: list[str] = []
        for record in records:
            line = _line(name, reason, now, record)
            if line is None:
                line = _line(name, reason, now, sanitized(record))
            if line is None:
                logger.error("LOST a record of run %r (sink %s): it cannot be serialized even after "
                             "sanitizing", _safe_id(record), name)  # fmt: skip
            else:
                lines.append(line)
        if lines:
            await self._worker.run(lambda: append_lines(self.path, lines))
            self._log(name, reason.encode("utf-8", "replace").decode("utf-8"), len(lines), error)
        return len(records) - len(lines)

    def _log(self, name: str, reason: str, count: int, error: BaseException) -> None:
        path, resend = self.path.resolve(), f"agentevals.sinks.replay({str(self.path)!r}, sink)"
        if not is_permanent(error):
            logger.warning(
                "sink %s failed after retries (%s); %d record(s) written to dead-letter file %s (re-send "
                "with %s)", name, reason, count, path, resend
            )  # fmt: skip
        elif (name, reason) in self._reported:
            logger.warning(
                "sink %s still cannot store records (%s, see the error above); %d record(s) written to "
                "dead-letter file %s", name, reason, count, path
            )  # fmt: skip
        else:
            self._reported.add((name, reason))
            logger.error(
                "sink %s cannot store records and was not retried: %s. Fix that, then re-send the %d "
                "record(s) written to dead-letter file %s with %s", name, reason, count, path, resend
            )  # fmt: skip

    def close(self) -> None:
        self._worker.stop()


def _line(sink: str, reason: str, failed_at: str, record: ScoreRecord) -> str | None:
    """The dead-letter line of ``record``, or ``None`` if it cannot be serialized as UTF-8 JSON."""
    # The error text itself may hold a lone surrogate: mend it, it is ours.
    reason = reason.encode("utf-8", "replace").decode("utf-8")
    try:
        entry = {"sink": sink, "error": reason, "failed_at": failed_at, "record": record_to_json(record)}
        line = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
        line.encode("utf-8")
    except Exception:
        return None
    return line


def _safe_id(record: ScoreRecord) -> str:
    return str(record.run_id).encode("utf-8", "replace").decode("utf-8")
