"""A private worker thread per sink for blocking I/O (sqlite3, file appends, sync callbacks).

Not ``asyncio.to_thread``: the default executor refuses new work once interpreter shutdown begins,
which is exactly when the exit-time flush must still write. One thread per sink also keeps a sqlite3
connection on the thread that created it.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_Job = tuple[Callable[[], Any], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]


class WorkerThread:
    """Runs blocking callables one at a time on one daemon thread; ``await worker.run(fn)``."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _ensure_started(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name=self._name, daemon=True)
                self._thread.start()

    def _loop(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, loop, future = job
            try:
                result = fn()
            except BaseException as err:
                loop.call_soon_threadsafe(_settle, future, None, err)
            else:
                loop.call_soon_threadsafe(_settle, future, result, None)

    async def run(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` on the worker thread and await its result (or exception)."""
        self._ensure_started()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._jobs.put((fn, loop, future))
        return await future

    def stop(self) -> None:
        """Let the thread finish queued jobs and exit."""
        with self._lock:
            if self._thread is not None:
                self._jobs.put(None)
                self._thread = None


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
