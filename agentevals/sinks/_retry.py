"""Retrying a sink with backoff, and the dead-letter file for batches that still cannot be written."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from agentevals._result import ScoreRecord
from agentevals.sinks._jsonl import append_lines
from agentevals.sinks._protocol import Sink, sink_name
from agentevals.sinks._row import record_to_json
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
        if self.attempts < 1:
            raise ValueError(f"RetryPolicy.attempts must be at least 1, got {self.attempts}")
        if self.initial < 0 or self.max_wait < 0:
            raise ValueError("RetryPolicy waits must not be negative")
        if self.timeout is not None and not self.timeout > 0:
            raise ValueError(f"RetryPolicy.timeout must be positive seconds or None, got {self.timeout!r}")


async def write_with_retry(
    sink: Sink,
    records: Sequence[ScoreRecord],
    policy: RetryPolicy,
    on_error: Callable[[BaseException], None] | None = None,
) -> BaseException | None:
    """Write ``records`` to ``sink``, retrying per ``policy``; the last error if every attempt failed.

    A plain loop, not a retry library: the first attempt is the hot path (one per batch) and costs
    only the call itself. Before attempt ``n + 1`` it waits ``initial * 2**(n - 1)``, capped at
    ``max_wait``; ``on_error`` sees every failed attempt.
    """
    for attempt in range(1, policy.attempts + 1):
        try:
            async with asyncio.timeout(policy.timeout):
                await sink.write(records)
            return None
        except Exception as err:
            error = err
            if on_error is not None:
                on_error(err)
        if attempt < policy.attempts:
            await asyncio.sleep(min(policy.max_wait, policy.initial * 2 ** (attempt - 1)))
    return error


class DeadLetter:
    """An append-only JSONL file of records a sink could not take; re-send them with ``replay``.

    Each line: ``{"sink": name, "error": "Type: message", "failed_at": iso, "record": {...}}``.

    >>> DeadLetter("dead.jsonl").path.name
    'dead.jsonl'
    """

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_DEAD_LETTER) -> None:
        self.path = Path(path)
        self._worker = WorkerThread("agentevals-deadletter")

    async def write(self, records: Sequence[ScoreRecord], sink: Sink, error: BaseException) -> None:
        """Append ``records`` (blocking I/O on a private thread); logs the path at WARNING."""
        now = datetime.now(UTC).isoformat()
        reason = f"{type(error).__name__}: {error}"
        name = sink_name(sink)
        lines = [
            json.dumps(
                {"sink": name, "error": reason, "failed_at": now, "record": record_to_json(r)},
                ensure_ascii=False,
                separators=(",", ":"),
            )
            for r in records
        ]
        await self._worker.run(lambda: append_lines(self.path, lines))
        logger.warning(
            "sink %s failed after retries (%s); %d record(s) written to dead-letter file %s "
            "(re-send with agentevals.sinks.replay(%r, sink))",
            name,
            reason,
            len(records),
            self.path.resolve(),
            str(self.path),
        )

    def close(self) -> None:
        self._worker.stop()
