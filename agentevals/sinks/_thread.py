"""Private threads for sinks: a worker per sink for blocking I/O (sqlite3, file appends, sync callbacks),
and a ``Handoff`` thread that runs GIL-releasing calls while the worker builds the next one.

Not ``asyncio.to_thread``: the default executor refuses new work once interpreter shutdown begins,
which is exactly when the exit-time flush must still write. One thread per sink also keeps its writes
in order.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_Job = tuple[Callable[[], Any], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]
_Call = tuple[Callable[[], Any], int]  # a Handoff callable and its round


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


class Handoff:
    """Runs callables in order on its own thread while the thread submitting them keeps working.

    Meant for callables that release the GIL (``sqlite3`` statements): ``submit(fn)`` first waits for
    the previous callable to start, so at most one is queued, then returns at once; the GIL then passes
    to the handoff thread only while it needs it. ``join()`` waits for all and raises the first error;
    after an error, the callables submitted before that ``join()`` do not run.
    """

    def __init__(self, name: str) -> None:
        self._name = name
        self._thread: threading.Thread | None = None
        self._jobs: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._started: queue.SimpleQueue[None] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[BaseException | None] = queue.SimpleQueue()
        self._unstarted = 0  # submitted callables whose start was not awaited yet (0 or 1)
        self._unfinished = 0
        self._round = 0  # callables submitted between two joins share a round

    def submit(self, fn: Callable[[], Any]) -> None:
        """Run ``fn`` on the handoff thread after the callables submitted before it."""
        self._await_start()
        if self._thread is None or not self._thread.is_alive():
            self._start_thread()
        self._jobs.put((fn, self._round))
        self._unstarted += 1
        self._unfinished += 1

    def join(self) -> None:
        """Wait for every submitted callable; raise the first error among them."""
        self._await_start()
        errors = [self._done.get() for _ in range(self._unfinished)]
        self._unfinished = 0
        self._round += 1
        error = next((e for e in errors if e is not None), None)
        if error is not None:
            raise error

    def stop(self) -> None:
        """Let the thread exit after the submitted callables (a later ``submit`` starts a new one)."""
        if self._thread is not None:
            self._jobs.put(None)
            self._thread = None

    def _await_start(self) -> None:
        if self._unstarted:
            self._started.get()
            self._unstarted = 0

    def _start_thread(self) -> None:
        # Fresh queues: a stopping thread may not have taken its None yet.
        self._jobs, self._started, self._done = queue.SimpleQueue(), queue.SimpleQueue(), queue.SimpleQueue()
        args = (self._jobs, self._started, self._done)
        self._thread = threading.Thread(target=_handoff_loop, args=args, name=self._name, daemon=True)
        self._thread.start()


def _handoff_loop(
    jobs: queue.SimpleQueue[_Call | None],
    started: queue.SimpleQueue[None],
    done: queue.SimpleQueue[BaseException | None],
) -> None:
    failed_round = -1
    while (job := jobs.get()) is not None:
        fn, round_ = job
        started.put(None)
        if round_ == failed_round:
            done.put(None)  # skipped: an earlier callable of its round failed
            continue
        try:
            fn()
        except BaseException as err:
            failed_round = round_
            done.put(err)
        else:
            done.put(None)


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
