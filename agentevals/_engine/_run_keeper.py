"""``store_runs="all"``: the runs no scorer sampled, stored anyway by the sinks that ask for them.

A ``ScoringEngine`` makes a :class:`RunKeeper` only when one of its sinks has ``store_runs="all"``, so the
hot path of everyone else is one ``is None`` test. ``submit`` hands a sampled-out run to :meth:`offer`
(a deque append); the engine's loop writes them in batches (``write_runs``: runs rows only, no score
rows) after the delivery's ``linger`` seconds or at its ``batch_size``, and at every flush and shutdown.
Each run goes through the engine's entity and ``redact`` as a record would. A full buffer or a failed write is
counted and logged: nothing is dropped silently.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Sequence
from typing import Any

from agentevals._model._deferred_run import DeferredRun
from agentevals._model._redact import Redactor
from agentevals._model._result import ScoreRecord, ScoreResult, run_fields
from agentevals._model._run import Run
from agentevals._scoring._score_once import finalize

logger = logging.getLogger("agentevals.engine")

#: The scorer id of the carrier record a sampled-out run travels in (never stored as a score).
CARRIER_ID = "agentevals.unscored_run"


class RunKeeper:
    """Collects sampled-out runs and writes them to the sinks with ``store_runs="all"``."""

    def __init__(
        self,
        sinks: Sequence[Any],
        loop: asyncio.AbstractEventLoop,
        *,
        entity: str | None,
        redact: Redactor | None,
        batch_size: int,
        linger: float,
        max_buffer: int,
    ) -> None:
        self.sinks = list(sinks)
        self.entity, self.redact = entity, redact
        self.batch_size, self.linger, self.max_buffer = batch_size, linger, max_buffer
        self.stored = 0  # runs written (counted once per sink)
        self.dropped = 0  # runs not kept: the buffer was full
        self.failed = 0  # runs a sink failed to write (once per sink), or that could not be built
        self._loop = loop
        self._buffer: deque[Run | DeferredRun] = deque()
        self._scheduled = False
        self._writing: asyncio.Lock | None = None

    @classmethod
    def create(
        cls, sinks: Sequence[Any], loop: asyncio.AbstractEventLoop, **options: Any
    ) -> RunKeeper | None:
        """A keeper for the sinks made with ``store_runs="all"``; ``None`` when there is none."""
        wanting = [s for s in sinks if getattr(s, "store_runs", None) == "all" and hasattr(s, "write_runs")]
        return cls(wanting, loop, **options) if wanting else None

    def offer(self, run: Run | DeferredRun) -> None:
        """Keep ``run`` for writing (called by ``submit``, under the engine's lock: cheap, never raises)."""
        if len(self._buffer) >= self.max_buffer:
            self.dropped += 1
            return
        self._buffer.append(run)
        if not self._scheduled or len(self._buffer) == self.batch_size:
            self._scheduled = True
            self._loop.call_soon_threadsafe(self._schedule, len(self._buffer) >= self.batch_size)

    def _schedule(self, now: bool) -> None:
        if now:
            self._loop.create_task(self.drain())
        else:
            self._loop.call_later(self.linger, lambda: self._loop.create_task(self.drain()))

    async def drain(self) -> None:
        """Write every run kept so far (on the engine's loop; a flush and a shutdown await it)."""
        if self._writing is None:
            self._writing = asyncio.Lock()
        async with self._writing:
            self._scheduled = False
            while self._buffer:
                batch = [self._buffer.popleft() for _ in range(min(self.batch_size, len(self._buffer)))]
                await self._write([r for r in map(self._carrier, batch) if r is not None])

    def _carrier(self, run: Run | DeferredRun) -> ScoreRecord | None:
        """A record carrying ``run`` (its runs row is what gets written), with the engine's entity and
        redaction applied; ``None`` (counted) when a deferred run cannot be built."""
        try:
            built = run.materialize() if isinstance(run, DeferredRun) else run
            record = ScoreResult(
                scorer_id=CARRIER_ID, scorer_name=CARRIER_ID, score=0.0, source="live", **run_fields(built)
            )
            return finalize(record, built.entity or self.entity, self.redact)
        except Exception as err:
            self.failed += 1
            logger.warning(
                "agentevals: an unscored run could not be built to store it: %s: %s", type(err).__name__, err
            )
            return None

    async def _write(self, records: list[ScoreRecord]) -> None:
        if not records:
            return
        for sink in self.sinks:
            try:
                await sink.write_runs(records)
            except Exception as err:  # one sink's fault never stops the others
                self.failed += len(records)
                logger.warning(
                    "agentevals: sink %s failed to store %d unscored runs: %s: %s",
                    getattr(sink, "name", type(sink).__name__),
                    len(records),
                    type(err).__name__,
                    err,
                )
            else:
                self.stored += len(records)
