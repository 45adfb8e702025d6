"""``CallbackSink``: hand each record to a plain function (sync or async)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agentevals._model._result import ScoreRecord
from agentevals._support._sync import really_cancelled
from agentevals.sinks._errors import PartialWriteError
from agentevals.sinks._thread import WorkerThread


class CallbackSink:
    """Calls ``fn(record)`` for each record.

    An async ``fn`` is awaited on the engine's loop; a sync ``fn`` runs on the sink's own thread (one
    batch per hop) so a slow callback never stalls scoring. Delivery is per record: when ``fn`` raises
    for some records, the others are still delivered, and only the failed ones are retried (then
    dead-lettered), through a :class:`~agentevals.sinks.PartialWriteError`.

    >>> seen = []
    >>> sink = CallbackSink(seen.append)
    """

    def __init__(self, fn: Callable[[ScoreRecord], Any | Awaitable[Any]], *, name: str | None = None) -> None:
        if not callable(fn):
            raise TypeError(f"CallbackSink needs a callable taking one record, got {fn!r}")
        self.fn = fn
        self.name = name or f"callback:{getattr(fn, '__qualname__', type(fn).__name__)}"
        self._async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004 - async callable objects
        )
        self._worker = WorkerThread(f"agentevals-sink-{self.name}")

    def check(self) -> None:
        """Nothing to verify: this sink has no driver, connection or path (``check()`` is there so that
        every sink can be checked the same way)."""

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        failed: list[ScoreRecord] = []
        first: BaseException | None = None
        if self._async:
            for record in records:
                try:
                    await self.fn(record)
                except BaseException as err:
                    if really_cancelled(err):
                        raise
                    failed.append(record)
                    first = first or err
        else:
            batch = list(records)
            failed, first = await self._worker.run(lambda: self._call_each(batch))
        if first is not None:
            if len(failed) == len(records):
                raise first
            raise PartialWriteError(failed, first)

    def _call_each(self, batch: list[ScoreRecord]) -> tuple[list[ScoreRecord], BaseException | None]:
        failed: list[ScoreRecord] = []
        first: BaseException | None = None
        for record in batch:
            try:
                result = self.fn(record)
                if inspect.isawaitable(result):
                    close = getattr(result, "close", None)
                    if close is not None:
                        close()
                    raise TypeError("a sync callback returned an awaitable; make the callback `async def`")
            except BaseException as err:  # one record's failure never stops the others
                failed.append(record)
                first = first or err
        return failed, first

    async def close(self) -> None:
        self._worker.stop()
