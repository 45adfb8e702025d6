"""The sync face of async code: one shared event loop on a daemon thread.

Running every sync call on the same long-lived loop works the same whether or not the caller already
has a running loop (Jupyter), needs no patching of asyncio, and keeps LiteLLM's loop-bound HTTP
clients valid across calls.

At interpreter exit the loop is closed cleanly: the tasks still pending on it (LiteLLM's logging
worker, idle HTTP connections) are cancelled and awaited, so Python never prints "Task was destroyed
but it is pending!". That handler is registered when this module is imported, before any engine
exists; ``atexit`` runs handlers last-registered-first, so every engine's exit-time flush (registered
when the engine is made) runs before the loop closes. The loop's default executor (DNS lookups for
judge calls) keeps working during that flush, where ``concurrent.futures`` pools refuse new work.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import queue
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_EXIT_WAIT = 5.0  # seconds the exit handler waits for the pending tasks to end


class _ExitSafeExecutor(concurrent.futures.ThreadPoolExecutor):
    """The shared loop's default executor (``run_in_executor``, ``getaddrinfo``), on daemon threads of
    its own: a ``ThreadPoolExecutor`` stops taking work once interpreter shutdown begins, which is when
    the engines' exit-time flush still calls judges. Threads start on demand, up to ``max_workers``."""

    def __init__(self, max_workers: int = 8) -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix="agentevals-executor")
        self._jobs: queue.SimpleQueue[tuple[concurrent.futures.Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._workers: list[threading.Thread] = []
        self._idle = 0
        self._guard = threading.Lock()
        self._stopped = False

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._guard:
            if self._stopped:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._jobs.put((future, lambda: fn(*args, **kwargs)))
            if self._idle:
                self._idle -= 1
            elif len(self._workers) < self._max_workers:
                thread = threading.Thread(target=self._work, name=f"agentevals-executor-{len(self._workers)}",
                                          daemon=True)  # fmt: skip
                self._workers.append(thread)
                thread.start()
        return future

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, call = job
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(call())
                except BaseException as err:
                    future.set_exception(err)
            del job, future, call
            with self._guard:
                self._idle += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._guard:
            self._stopped = True
            workers = list(self._workers)
        for _ in workers:
            self._jobs.put(None)
        if wait:
            for thread in workers:
                thread.join()


def background_loop() -> asyncio.AbstractEventLoop:
    """The shared agentevals event loop, started on first use."""
    global _loop, _thread
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            loop.set_default_executor(_ExitSafeExecutor())
            thread = threading.Thread(target=loop.run_forever, name="agentevals-loop", daemon=True)
            thread.start()
            _loop, _thread = loop, thread
        return _loop


def close_background_loop(timeout: float = _EXIT_WAIT) -> bool:
    """Cancel the tasks still pending on the shared loop, let them end, then stop and close it; a later
    call of :func:`background_loop` starts a new one. ``False`` when the loop could not be closed within
    ``timeout`` (a task holds it): it is left running."""
    global _loop, _thread
    with _lock:
        loop, thread = _loop, _thread
        if loop is None or loop.is_closed():
            return True
        _loop = _thread = None
    if thread is not None and thread.is_alive() and loop.is_running():
        try:
            asyncio.run_coroutine_threadsafe(_cancel_pending(timeout), loop).result(timeout + 1.0)
        except (concurrent.futures.TimeoutError, RuntimeError):
            return False
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if thread.is_alive():
            return False
    with contextlib.suppress(RuntimeError):
        loop.close()
    return True


async def _cancel_pending(timeout: float) -> None:
    current = asyncio.current_task()
    pending = [task for task in asyncio.all_tasks() if task is not current]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.wait(pending, timeout=timeout)
    loop = asyncio.get_running_loop()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(loop.shutdown_asyncgens(), timeout)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(loop.shutdown_default_executor(), timeout)


def _close_at_exit() -> None:
    with contextlib.suppress(Exception):
        close_background_loop()


# At import, so before any engine registers its exit-time shutdown: atexit runs this one after them.
atexit.register(_close_at_exit)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code, in or out of a running event loop."""
    return run_soon(coro).result()


def run_soon(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Start ``coro`` on the shared loop from synchronous code; its future to wait on."""
    loop = background_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        coro.close()
        raise RuntimeError(
            "a sync agentevals call was made on agentevals' own event loop; await the async "
            "variant instead (e.g. `await scorer.run(...)` rather than `scorer.run_sync(...)`)"
        )
    return asyncio.run_coroutine_threadsafe(coro, loop)


def really_cancelled(error: BaseException) -> bool:
    """Whether ``error`` is the cancellation of the running task (shutdown), not a ``CancelledError``
    some code raised on its own (which is an ordinary failure)."""
    if not isinstance(error, asyncio.CancelledError):
        return False
    task = asyncio.current_task()
    return task is None or task.cancelling() > 0
