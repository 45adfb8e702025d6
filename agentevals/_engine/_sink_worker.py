"""One writer per sink: buffer, batch (size or linger), retry, dead-letter. Sinks never block each other."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable

from agentevals._result import ScoreRecord
from agentevals.sinks._protocol import Sink, sink_name
from agentevals.sinks._retry import DeadLetter, RetryPolicy, write_with_retry

logger = logging.getLogger("agentevals.engine")


class SinkWorker:
    """Owns one sink's buffer; all methods run on the engine's loop."""

    def __init__(
        self,
        sink: Sink,
        *,
        batch_size: int,
        linger: float,
        max_buffer: int,
        retry: RetryPolicy,
        dead_letter: DeadLetter,
        on_error: Callable[[BaseException], None],
        on_dead_letter: Callable[[int, bool], None],
        on_written: Callable[[], None],
    ) -> None:
        self.sink = sink
        self.name = sink_name(sink)
        self.batch_size = batch_size
        self.linger = linger
        self.max_buffer = max_buffer
        self.retry = retry
        self.dead_letter = dead_letter
        self.on_error = on_error
        self.on_dead_letter = on_dead_letter
        self.on_written = on_written
        self.buffer: deque[ScoreRecord] = deque()
        self.writing = 0
        self.urgent = 0
        self._has_data = asyncio.Event()
        self._full = asyncio.Event()
        self._space = asyncio.Event()
        self._space.set()

    @property
    def idle(self) -> bool:
        return not self.buffer and not self.writing

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
        """Buffer one record, waiting while the buffer is full (backpressure onto scoring)."""
        while not self.offer(record):
            self._space.clear()
            await self._space.wait()

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
                self.writing = len(batch)
                try:
                    await self.deliver(batch)
                finally:
                    self.writing = 0
                    del batch  # written: keep no record alive while waiting for the next batch
                    self.on_written()

    async def deliver(self, batch: list[ScoreRecord]) -> None:
        """Write with retries; dead-letter what still fails; never raises (except cancellation)."""
        error = await write_with_retry(self.sink, batch, self.retry, self.on_error)
        if error is not None:
            await self.spill(batch, error)

    async def spill(self, batch: list[ScoreRecord], error: BaseException) -> None:
        try:
            await self.dead_letter.write(batch, self.sink, error)
        except Exception as err:
            logger.error(
                "LOST %d record(s) for sink %s: the dead-letter file %s could not be written (%s: %s)",
                len(batch),
                self.name,
                self.dead_letter.path,
                type(err).__name__,
                err,
            )
            self.on_dead_letter(len(batch), False)
        else:
            self.on_dead_letter(len(batch), True)

    def take_all(self) -> list[ScoreRecord]:
        records = list(self.buffer)
        self.buffer.clear()
        self._has_data.clear()
        self._full.clear()
        self._space.set()
        return records
