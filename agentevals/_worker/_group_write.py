"""Group commit for a scoring worker: the records of the messages under way at once are written to the
sinks in one batch, and each message learns whether *its* records are stored before it is acked."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from agentevals._model._result import ScoreRecord


class SinkUnavailable(Exception):
    """A sink could not store a message's records (a transient outage): the message is retried."""


class GroupWriter:
    """Write records to every sink, one batch at a time; :meth:`write` returns once the batch holding
    the records is stored in every sink, and raises :class:`SinkUnavailable` when a sink failed.

    One batch is written while the next gathers, so a sink sees one write at a time (the PostgreSQL
    sink's one connection is never shared by two transactions) and a busy worker writes large batches.
    """

    def __init__(self, sinks: Sequence[Any], max_batch: int = 1000) -> None:
        self.sinks = list(sinks)
        self.max_batch = max_batch
        self._waiting: list[tuple[list[ScoreRecord], asyncio.Future[None]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append((list(records), done))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.ensure_future(self._drain())
        # Shielded: a cancelled message (worker stopping) leaves its batch to finish for the others.
        await asyncio.shield(done)

    async def _drain(self) -> None:
        while self._waiting:
            taken, size = 0, 0
            for records, _ in self._waiting:
                taken += 1
                size += len(records)
                if size >= self.max_batch:
                    break
            group, self._waiting = self._waiting[:taken], self._waiting[taken:]
            batch = [record for records, _ in group for record in records]
            try:
                error = await self._write_all(batch)
            except BaseException as err:  # cancelled (loop stopping): its messages are not acked
                error = SinkUnavailable(f"the write was interrupted ({type(err).__name__})")
                self._settle(group, error)
                raise
            self._settle(group, error)

    @staticmethod
    def _settle(
        group: list[tuple[list[ScoreRecord], asyncio.Future[None]]], error: SinkUnavailable | None
    ) -> None:
        for _, done in group:
            if done.done():
                continue
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(error)

    async def _write_all(self, batch: list[ScoreRecord]) -> SinkUnavailable | None:
        """``None`` when every sink stored ``batch``; else the error naming the sinks that failed (a
        record re-sent to a sink that stored it adds no row: ids are deterministic)."""
        failures = []
        for sink in self.sinks:
            try:
                await sink.write(batch)
            except Exception as err:  # any sink error: the messages are retried, never acked unwritten
                failures.append(f"{type(sink).__name__}: {type(err).__name__}: {err}")
        if not failures:
            return None
        return SinkUnavailable(f"{len(batch)} record(s) not stored: " + "; ".join(failures))

    async def close(self) -> None:
        """Finish the batch under way, then close the sinks."""
        if self._writer is not None:
            await asyncio.gather(self._writer, return_exceptions=True)
        for sink in self.sinks:
            await sink.close()
