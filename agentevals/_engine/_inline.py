"""Sync scorers scored off the engine's loop: chunks of calls on a worker thread, under their timeouts.

A sync step cannot be interrupted. So the engine hands sync scorer calls, in chunks, to a worker thread
with its own event loop and waits for each chunk with a timer set to the deadline of the call under way.
Who owns a call's outcome is decided per call with one atomic ``dict.setdefault`` (the GIL makes it a
compare-and-set): the worker claims the call when it returns, the engine when the deadline has passed;
whoever claims first wins. When the engine wins, the call is stuck: it gets a ``TimeoutError`` record,
the records already produced are kept, the rest of the chunk goes to a fresh worker, and the stuck
thread is abandoned (it stops by itself if the call ever returns). One task per chunk, none per call.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from agentevals._model._result import ScoreRecord
from agentevals._model._run import Run
from agentevals._scoring._score_once import FailureLog, score_inline

if TYPE_CHECKING:
    from agentevals._engine._config import ScorerEntry

CHUNK = 64  # sync scorer calls per hand-over to the worker
WATCH_POLL = 1.0  # seconds at most between two looks at the call under way (calls without a timeout)
WORKER, ENGINE = "worker", "engine"  # who claimed a call's outcome

#: (run, entry, submitted_at, run state, timeout) of one sync scorer call.
Pair = tuple[Run, "ScorerEntry", float, Any, float | None]


class Chunk:
    """Sync scorer calls run in order by a worker; ``records`` are the outcomes it claimed, in order."""

    __slots__ = ("at", "claims", "pairs", "records", "stop")

    def __init__(self, pairs: list[Pair]) -> None:
        self.pairs = pairs
        self.records: list[ScoreRecord] = []
        self.at = (0, time.monotonic())  # the call under way and when it started
        self.claims: dict[int, str] = {}
        self.stop = False  # the engine no longer wants the rest (it is shutting down)

    async def run(self, failures: FailureLog) -> None:
        """Score the calls in order (on the worker's loop)."""
        claims, records = self.claims, self.records
        for i, (run, entry, _, _, timeout) in enumerate(self.pairs):
            if self.stop:
                return
            self.at = (i, time.monotonic())
            outcome = score_inline(run, entry.scorer, timeout, failures)
            if isinstance(outcome, asyncio.Task):  # a step awaited after all: it runs under its timeout
                outcome = await outcome
            if claims.setdefault(i, WORKER) != WORKER:
                # The engine gave up on this call: this worker is abandoned; end its thread.
                asyncio.get_running_loop().stop()
                return
            records.append(outcome)

    def overdue(self) -> int | None:
        """The call under way if its deadline has passed and the engine claimed it (it is stuck)."""
        i, started = self.at
        timeout = self.pairs[i][4]
        if timeout is None or time.monotonic() < started + timeout:
            return None
        return i if self.claims.setdefault(i, ENGINE) == ENGINE else None

    def wait_for(self) -> float:
        """Seconds until the deadline of the call under way (at most ``WATCH_POLL``)."""
        i, started = self.at
        timeout = self.pairs[i][4]
        if timeout is None:
            return WATCH_POLL
        return max(0.0, min(WATCH_POLL, started + timeout - time.monotonic()))


class InlineWorker:
    """A daemon thread running its own event loop, for chunks of sync scorer calls."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="agentevals-sync-scorers", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    def submit(self, call: Coroutine[Any, Any, None]) -> concurrent.futures.Future[None]:
        return asyncio.run_coroutine_threadsafe(call, self.loop)

    def close(self) -> None:
        """Stop the loop once its current chunk (if any) is done; a stuck thread stays abandoned."""
        with contextlib.suppress(RuntimeError):  # closed meanwhile
            self.loop.call_soon_threadsafe(self.loop.stop)
