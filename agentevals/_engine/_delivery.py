"""The engine's delivery to its sinks: one :class:`SinkWriter` per sink (buffer, batches, retry,
isolation, dead letter), the runs no scorer sampled for the sinks that keep them (``_run_keeper``), and
the scorers and drop counts for the sinks that store them. Sinks never block each other, and every
record handed over ends counted: written, dead-lettered or lost."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentevals._engine._config import ScorerEntry
from agentevals._engine._drops import merge
from agentevals._engine._options import DeliveryOptions
from agentevals._engine._run_keeper import RunKeeper
from agentevals._model._redact import Redactor
from agentevals._model._result import ScoreRecord
from agentevals._store._catalog_tables import DropCount, ScorerInfo
from agentevals._support._sync import really_cancelled
from agentevals.sinks._errors import PartialWriteError, is_permanent
from agentevals.sinks._protocol import Sink, sink_name
from agentevals.sinks._retry import DeadLetter, retried, write_once
from agentevals.sinks._sanitize import is_storable, sanitized

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
            SinkWriter(
                sink,
                name if names.count(name) == 1 else f"{name}#{names[:i].count(name) + 1}",
                options,
                self.dead_letter,
                on_error=self._on_error,
                on_dead_letter=self._on_dead_letter,
                on_written=on_written,
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

    def offer(self, record: ScoreRecord) -> list[SinkWriter]:
        """Buffer ``record`` for every sink without waiting; the writers whose buffer was full (the
        record still has to be :meth:`put` there)."""
        return [writer for writer in self.writers if not writer.offer(record)]

    async def put(self, record: ScoreRecord, writers: list[SinkWriter] | None = None) -> None:
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
            writer.urgent -= 1

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


class SinkWriter:
    """Owns one sink's buffer and writes it in batches (``batch_size`` or after ``linger``); all
    methods run on the engine's loop.

    ``written`` counts the records the sink took; what it never took goes to the dead-letter file
    (``on_dead_letter(dead_lettered, lost)``). ``unsettled`` is the batch being written, minus what is
    already counted: if the writer is cancelled (a shutdown out of time), it goes back to the buffer,
    which the shutdown dead-letters.

    ``scorers`` and ``drops`` wait to be written beside the batches, for a sink that stores them
    (``write_scorers``: the engine's scorers and thresholds when it starts; ``write_drops``: counts of
    dropped runs, see ``_drops``); other sinks never get any.
    """

    def __init__(
        self,
        sink: Sink,
        name: str,
        options: DeliveryOptions,
        dead_letter: DeadLetter,
        *,
        on_error: Callable[[BaseException], None],
        on_dead_letter: Callable[[int, int], None],
        on_written: Callable[[], None],
    ) -> None:
        self.sink = sink
        self.name = name
        self.batch_size = options.batch_size
        self.linger = options.linger
        self.max_buffer = options.buffer
        self.retry = options.retry
        self.dead_letter = dead_letter
        self.on_error = on_error
        self.on_dead_letter = on_dead_letter
        self.on_written = on_written
        self.buffer: deque[ScoreRecord] = deque()
        self.unsettled: list[ScoreRecord] = []
        self.written = 0
        self.urgent = 0
        self.scorers: list[ScorerInfo] = []
        self.drops: list[DropCount] = []
        self.extras_pending = False  # scorers or drops being written
        self.stores_scorers = callable(getattr(sink, "write_scorers", None))
        self.stores_drops = callable(getattr(sink, "write_drops", None))
        self._has_data = asyncio.Event()
        self._full = asyncio.Event()
        self._space = asyncio.Event()
        self._space.set()

    @property
    def idle(self) -> bool:
        return not (self.buffer or self.unsettled or self.scorers or self.drops or self.extras_pending)

    @property
    def pending(self) -> int:
        """Records buffered or being written, not yet counted."""
        return len(self.buffer) + len(self.unsettled)

    # -- scorers and drop counts --------------------------------------------------------------------

    def add_scorers(self, scorers: list[ScorerInfo]) -> None:
        """Write ``scorers`` with the next batch (or alone, after ``linger``)."""
        if self.stores_scorers and scorers:
            self.scorers = scorers
            self._has_data.set()

    def add_drops(self, drops: list[DropCount]) -> None:
        """Write these drop counts with the next batch (or alone, after ``linger``)."""
        if self.stores_drops and drops:
            self.drops = merge([*self.drops, *drops]) if self.drops else drops
            self._has_data.set()

    async def write_extras(self) -> None:
        """Write the waiting scorers and drop counts, retried as a batch is; what still fails is
        logged and given up (the engine's ``stats()`` keeps the drops). Never raises (but cancellation)."""
        self.extras_pending = True
        try:
            error = await retried(self._write_extras_once, self.retry, self.on_error)
            if error is not None:
                logger.error(
                    "agentevals: sink %s could not store %d scorer(s) and %d drop count(s) (%s: %s); "
                    "the engine's stats() still counts the drops",
                    self.name, len(self.scorers), len(self.drops), type(error).__name__, error,
                )  # fmt: skip
                self.scorers, self.drops = [], []
        finally:
            self.extras_pending = False

    async def _write_extras_once(self) -> None:
        scorers, self.scorers = self.scorers, []
        drops, self.drops = self.drops, []
        try:
            if scorers:
                await asyncio.wait_for(self.sink.write_scorers(scorers), self.retry.timeout)  # type: ignore[attr-defined]
                scorers = []
            if drops:
                await asyncio.wait_for(self.sink.write_drops(drops), self.retry.timeout)  # type: ignore[attr-defined]
        except BaseException:
            # Back for the next attempt, with whatever came meanwhile.
            self.scorers = self.scorers or scorers
            self.drops = merge([*drops, *self.drops])
            raise

    # -- records ------------------------------------------------------------------------------------

    def offer(self, record: ScoreRecord) -> bool:
        """Buffer one record now; ``False`` (nothing buffered) when the buffer is full."""
        if len(self.buffer) >= self.max_buffer:
            return False
        self.buffer.append(record)
        self._has_data.set()
        if len(self.buffer) >= self.batch_size:
            self._full.set()
        return True

    async def put(self, record: ScoreRecord) -> None:
        """Buffer one record, waiting while the buffer is full (backpressure onto scoring). Cancelled
        while waiting (shutdown), it still buffers the record, past the limit, for the shutdown to
        dead-letter: a record made is never dropped uncounted."""
        try:
            while not self.offer(record):
                self._space.clear()
                await self._space.wait()
        except asyncio.CancelledError:
            self.buffer.append(record)
            raise

    def hurry(self) -> None:
        """Skip the linger wait (a flush is waiting)."""
        self.urgent += 1
        self._full.set()

    def relax(self) -> None:
        self.urgent -= 1

    async def run(self) -> None:
        while True:
            await self._has_data.wait()
            if len(self.buffer) < self.batch_size and not self.urgent:
                try:
                    async with asyncio.timeout(self.linger):
                        await self._full.wait()
                except TimeoutError:
                    pass
            batch = [self.buffer.popleft() for _ in range(min(self.batch_size, len(self.buffer)))]
            if len(self.buffer) < self.batch_size:
                self._full.clear()
            if not self.buffer:
                self._has_data.clear()
            self._space.set()
            if batch:
                self.unsettled = batch
                try:
                    await self.deliver(batch)
                except asyncio.CancelledError:
                    self.buffer.extendleft(reversed(self.unsettled))  # the shutdown dead-letters them
                    raise
                finally:
                    self.unsettled = []  # settled: keep no record alive while waiting for the next batch
                    del batch
                    self.on_written()
            if self.scorers or self.drops:
                await self.write_extras()
                self.on_written()

    async def deliver(self, batch: list[ScoreRecord]) -> None:
        """Write with retries; dead-letter what still fails; never raises (except cancellation).

        After the first failed attempt the batch is checked for values no store can hold, which are
        replaced (:func:`~agentevals.sinks._sanitize.sanitized`) before the next attempt, at once. A
        partial write (:class:`PartialWriteError`) retries only its failed records. When every attempt
        failed, the batch is split in halves to isolate the records that fail on their own, unless both
        halves fail (the sink is down) or the attempts timed out (the sink hangs).
        """
        pending = batch
        error: BaseException | None = None
        checked = False
        attempt = 0
        while attempt < self.retry.attempts:
            attempt += 1
            error, pending = await self._attempt(pending)
            if error is None:
                return
            if is_permanent(error):  # a missing driver, database or permission: retries cannot help
                break
            if not checked:
                checked = True
                clean = [r if is_storable(r) else sanitized(r) for r in pending]
                if any(c is not r for c, r in zip(clean, pending, strict=True)):
                    pending = self.unsettled = clean
                    attempt -= 1  # not the store's fault: try again at once, as a fresh attempt
                    continue
            if attempt < self.retry.attempts:
                await asyncio.sleep(self.retry.backoff(attempt))
        assert error is not None
        if len(pending) > 1 and not isinstance(error, TimeoutError) and not is_permanent(error):
            pending = await self._isolate(pending)
        if pending:
            await self.spill(pending, error)

    async def _attempt(self, records: list[ScoreRecord]) -> tuple[BaseException | None, list[ScoreRecord]]:
        """One write: ``(None, [])`` when it worked, else the error and the records not written."""
        error: BaseException | None = None
        failed: list[ScoreRecord] = []
        try:
            await write_once(self.sink, records, self.retry.timeout)
        except PartialWriteError as err:
            failed, error = err.failed, err.error
        except BaseException as err:  # SystemExit, KeyboardInterrupt and the like too: a failed write
            if really_cancelled(err):
                raise
            failed, error = records, err
        self._count_written(records, failed)
        if error is not None:
            self.on_error(error)
        return error, failed

    def _count_written(self, records: list[ScoreRecord], failed: list[ScoreRecord]) -> None:
        count = len(records) - len(failed)
        if not count:
            return
        self.written += count
        if count == len(self.unsettled):  # the usual case: the whole batch at the first attempt
            self.unsettled = []
            return
        done = {id(r) for r in records} - {id(r) for r in failed}
        self.unsettled = [r for r in self.unsettled if id(r) not in done]

    async def _isolate(self, records: list[ScoreRecord]) -> list[ScoreRecord]:
        """Write the halves of ``records`` once each, recursively; the records that still fail."""
        half = len(records) // 2
        errors: list[BaseException | None] = []
        left: list[ScoreRecord] = []
        for part in (records[:half], records[half:]):
            part_error, failed = await self._attempt(part)
            errors.append(part_error)
            left += failed
        if all(e is not None for e in errors):
            return left  # both halves fail: not one bad record, the sink itself
        if len(left) > 1:
            return await self._isolate(left)
        return left

    async def spill(self, batch: list[ScoreRecord], error: BaseException) -> None:
        """Append ``batch`` to the dead-letter file, counting what it took and what was lost."""
        try:
            lost = await self.dead_letter.write(batch, self.sink, error)
        except BaseException as err:
            if really_cancelled(err):
                raise
            logger.error(
                "LOST %d record(s) for sink %s: the dead-letter file %s could not be written (%s: %s)",
                len(batch), self.name, self.dead_letter.path, type(err).__name__, err,
            )  # fmt: skip
            self.on_dead_letter(0, len(batch))
        else:
            self.on_dead_letter(len(batch) - lost, lost)
        self.unsettled = []

    def take_all(self) -> list[ScoreRecord]:
        """Empty the buffer (a shutdown); what it held."""
        records = list(self.buffer)
        self.buffer.clear()
        self._has_data.clear()
        self._full.clear()
        self._space.set()
        return records


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
