"""``CallbackSink``: hand each record to a plain function (sync or async)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agentevals._result import ScoreRecord
from agentevals.sinks._thread import WorkerThread


class CallbackSink:
    """Calls ``fn(record)`` for each record.

    An async ``fn`` is awaited on the engine's loop; a sync ``fn`` runs on the sink's own thread (one
    batch per hop) so a slow callback never stalls scoring. An exception fails the batch (retried).

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

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        if self._async:
            for record in records:
                await self.fn(record)
            return
        batch = list(records)

        def call_all() -> None:
            for record in batch:
                result = self.fn(record)
                if inspect.isawaitable(result):
                    raise TypeError("a sync callback returned an awaitable; make the callback `async def`")

        await self._worker.run(call_all)

    async def close(self) -> None:
        self._worker.stop()
