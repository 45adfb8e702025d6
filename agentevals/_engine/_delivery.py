"""The engine's delivery to its sinks: one writer per sink (batches, retry, dead letter; see
``_sink_worker``), the runs no scorer sampled for the sinks that keep them (``_run_keeper``), and the
scorers and drop counts for the sinks that store them. Every record handed over ends counted: written,
dead-lettered or lost."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentevals._engine._config import ScorerEntry
from agentevals._engine._options import DeliveryOptions
from agentevals._engine._run_keeper import RunKeeper
from agentevals._engine._sink_worker import SinkWorker
from agentevals._model._redact import Redactor
from agentevals._model._result import ScoreRecord
from agentevals._store._catalog_tables import DropCount, ScorerInfo
from agentevals.sinks._errors import is_permanent
from agentevals.sinks._protocol import Sink, sink_name
from agentevals.sinks._retry import DeadLetter

logger = logging.getLogger("agentevals.engine")

CLOSE_GRACE = 1.0  # seconds a sink (or the forwarder) may take to close after a shutdown ran out of time


class Delivery:
    """The sink writers of an engine and their counters (``sink_errors``, ``dead_lettered``,
    ``lost``); every method but the constructor runs on the engine's loop. ``on_written`` is called
    after each batch a writer settled (a waiting flush may look again)."""

    def __init__(
        self,
        sinks: Sequence[Sink],
        options: DeliveryOptions,
        loop: asyncio.AbstractEventLoop,
        *,
        entity: str | None,
        redact: Redactor | None,
        on_written: Callable[[], None],
    ) -> None:
        self.dead_letter = DeadLetter(options.dead_letter)
        names = [sink_name(sink) for sink in sinks]
        self.writers = [
            SinkWorker(
                sink,
                batch_size=options.batch_size,
                linger=options.linger,
                max_buffer=options.buffer,
                retry=options.retry,
                dead_letter=self.dead_letter,
                on_error=self._on_error,
                on_dead_letter=self._on_dead_letter,
                on_written=on_written,
                name=name if names.count(name) == 1 else f"{name}#{names[:i].count(name) + 1}",
            )
            for i, (sink, name) in enumerate(zip(sinks, names, strict=True))
        ]
        #: With a sink made with ``store_runs="all"``: stores the runs no scorer sampled.
        self.keeper = RunKeeper.create(
            sinks, loop, entity=entity, redact=redact, batch_size=options.batch_size, linger=options.linger,
            max_buffer=options.buffer,
        )  # fmt: skip
        #: Whether a sink stores the counts of the runs the engine dropped.
        self.stores_drops = any(w.stores_drops for w in self.writers)
        self.sink_errors = 0
        self.dead_lettered = 0
        self.lost = 0
        self._loop = loop
        self._tasks: list[asyncio.Task[None]] = []

    def start(self, entries: Mapping[str, ScorerEntry]) -> None:
        """Describe the scorers to the sinks that store them, and start the writers."""
        if any(w.stores_scorers for w in self.writers):
            try:
                scorers = scorer_infos(entries)
            except Exception:  # never a reason not to score
                logger.exception("agentevals: the scorers could not be described for the sinks")
                scorers = []
            for writer in self.writers:
                writer.add_scorers(scorers)
        self._tasks = [
            self._loop.create_task(w.run(), name=f"agentevals-sink-{w.name}") for w in self.writers
        ]

    def _on_error(self, error: BaseException) -> None:
        self.sink_errors += 1
        retry = "not retried, it cannot succeed" if is_permanent(error) else "will retry"
        logger.info("agentevals: a sink write failed (%s): %s: %s", retry, type(error).__name__, error)

    def _on_dead_letter(self, dead_lettered: int, lost: int) -> None:
        self.dead_lettered += dead_lettered
        self.lost += lost

    # -- records ----------------------------------------------------------------------------------

    def offer(self, record: ScoreRecord) -> list[SinkWorker]:
        """Buffer ``record`` for every sink without waiting; the writers whose buffer was full (the
        record still has to be :meth:`put` there)."""
        return [writer for writer in self.writers if not writer.offer(record)]

    async def put(self, record: ScoreRecord, writers: list[SinkWorker] | None = None) -> None:
        """Hand ``record`` to ``writers`` (default: all), waiting where a buffer is full; when
        cancelled, the writers not reached yet still get it in their buffers (to spill at shutdown)."""
        left = iter(self.writers if writers is None else writers)
        try:
            for writer in left:
                await writer.put(record)
        except asyncio.CancelledError:  # `put` buffered it; the other sinks get it too, to spill
            for writer in left:
                writer.buffer.append(record)
            raise

    def add_drops(self, drops: list[DropCount]) -> None:
        """Write these counts of dropped runs with the next batches, to the sinks that store them."""
        for writer in self.writers:
            writer.add_drops(drops)

    async def drain_keeper(self) -> None:
        """Write the unsampled runs kept so far (a flush waits for them)."""
        if self.keeper is not None:
            await self.keeper.drain()

    # -- flush and shutdown -------------------------------------------------------------------------

    @property
    def idle(self) -> bool:
        return all(w.idle for w in self.writers)

    @property
    def buffered(self) -> int:
        """Records buffered or being written, not yet counted."""
        return sum(w.pending for w in self.writers)

    def hurry(self) -> None:
        """A flush waits: write without lingering until :meth:`relax`."""
        for writer in self.writers:
            writer.hurry()

    def relax(self) -> None:
        for writer in self.writers:
            writer.relax()

    def cancel(self) -> list[asyncio.Task[None]]:
        """Cancel the writers (a shutdown); the tasks to wait for."""
        for task in self._tasks:
            task.cancel()
        return self._tasks

    async def close(self, deadline: float) -> None:
        """After :meth:`cancel`: dead-letter what the sinks never took, write the scorers and drops
        still waiting, and close the sinks, each within ``deadline`` (``time.monotonic()``) or a grace."""
        for writer in self.writers:
            leftover = writer.take_all()
            if leftover:
                await writer.spill(leftover, RuntimeError("engine shut down before the sink took these"))
            try:
                async with asyncio.timeout(max(CLOSE_GRACE, deadline - time.monotonic())):
                    if writer.scorers or writer.drops:
                        await writer.write_extras()
                    await writer.sink.close()
            except BaseException as err:
                logger.warning(
                    "agentevals: closing sink %s failed: %s: %s", writer.name, type(err).__name__, err
                )
        self.dead_letter.close()

    # -- counters -----------------------------------------------------------------------------------

    def totals(self) -> dict[str, int]:
        """What a :class:`~agentevals.FlushReport` counts of the records' copies."""
        written = sum(w.written for w in self.writers)
        return {"written": written, "dead_lettered": self.dead_lettered, "lost": self.lost}

    def stats(self) -> dict[str, Any]:
        """The delivery's fields of :class:`~agentevals.engine.EngineStats`."""
        return {
            "written": {w.name: w.written for w in self.writers},
            "buffered": self.buffered,
            "sink_errors": self.sink_errors,
            "dead_lettered": self.dead_lettered,
            "lost": self.lost,
        }


def scorer_infos(entries: Mapping[str, ScorerEntry]) -> list[ScorerInfo]:
    """The attached scorers as a store's scorers table keeps them (``source="live"``)."""
    return [
        ScorerInfo(
            scorer_id=key,
            scorer_name=entry.scorer.name,
            scorer_version=entry.scorer.version,
            source="live",
            threshold_min=None if entry.threshold is None else entry.threshold.min,
            threshold_max=None if entry.threshold is None else entry.threshold.max,
        )
        for key, entry in entries.items()
    ]
