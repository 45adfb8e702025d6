"""The engine's control side: flush, shutdown, reports and stats (``ScoringEngine`` inherits it).

The scoring side (submit, dispatch, scoring, accounting per pair) stays in ``_engine.py``; this part
only waits for it, stops it and reads its counters.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentevals._engine._config import ScorerEntry, check_timeout
from agentevals._engine._inline import InlineWorker
from agentevals._engine._signals import SigtermFlush
from agentevals._engine._sink_worker import SinkWorker
from agentevals._engine._stats import EngineStats, FlushReport, RuleCounters, percentile, report_since
from agentevals._scoring._limits._gate import EngineLimits
from agentevals.sinks._errors import is_permanent
from agentevals.sinks._retry import DeadLetter

if TYPE_CHECKING:
    from agentevals._engine._drops import DropLedger
    from agentevals._engine._forward._forwarder import Forwarder
    from agentevals._engine._run_keeper import RunKeeper

logger = logging.getLogger("agentevals.engine")

_SETTLE_POLL = 0.05  # seconds a flush waits for a wake-up before it checks again anyway
_CLOSE_GRACE = 1.0  # seconds each sink may take to close once a shutdown is out of time
_CALL_GRACE = 2.0  # seconds a blocking flush/shutdown waits past its timeout for the engine's answer


class EngineControl:
    """Flush, shutdown, reports and stats of a :class:`~agentevals.ScoringEngine` (a base class: the
    state below is set by the engine's ``__init__``)."""

    _entries: dict[str, ScorerEntry]
    _lock: threading.Lock
    _queue: deque[Any]
    _closed: bool
    _counts: dict[str, int]
    _sampled: list[int]
    _rule_counters: RuleCounters
    _done: dict[str, int]
    _skipped_by: dict[str, int]
    _latencies: deque[float]
    _pending_pairs: int
    _scoring: int
    _flushing: int
    _stopping: bool
    _shutdown_task: asyncio.Task[FlushReport] | None
    _reported: dict[str, int]
    _gave_up: bool
    _settled: asyncio.Event
    _loop: asyncio.AbstractEventLoop
    _rush: asyncio.Event
    _rush_at: int
    _workers: list[SinkWorker]
    _tasks: set[asyncio.Task[None]]
    _service: list[asyncio.Task[None]]
    _sigterm: SigtermFlush | None
    _gate: EngineLimits | None
    _worker: InlineWorker | None
    _forwarder: Forwarder | None  # with broker=: publishes the accepted runs instead of scoring them
    _keeper: RunKeeper | None  # with a store_runs="all" sink: stores the runs no scorer sampled
    _drops: DropLedger | None  # with a sink that stores drop counts
    dead_letter: DeadLetter
    exit_timeout: float

    def _on_sink_error(self, error: BaseException) -> None:
        self._done["sink_errors"] += 1
        retry = "not retried, it cannot succeed" if is_permanent(error) else "will retry"
        logger.info("agentevals: a sink write failed (%s): %s: %s", retry, type(error).__name__, error)

    def _on_dead_letter(self, dead_lettered: int, lost: int) -> None:
        self._done["dead_lettered"] += dead_lettered
        self._done["lost"] += lost

    def _publish_drops(self) -> None:
        """Hand the drops counted so far to the sink workers (on the loop). The lock is waited for a
        moment only: a SIGTERM handler's shutdown may run while its own thread holds it in ``submit``."""
        if self._drops is None:
            return
        locked = self._lock.acquire(timeout=0.5)
        try:
            drops = self._drops.take()
        finally:
            if locked:
                self._lock.release()
        for worker in self._workers:
            worker.add_drops(drops)

    def _is_idle(self) -> bool:
        if self._forwarder is not None and not self._forwarder.idle:
            return False
        return not self._queue and self._pending_pairs == 0 and all(w.idle for w in self._workers)

    def _check_settled(self) -> None:
        """Wake a waiting flush as soon as nothing is left (no polling delay)."""
        if self._flushing and self._is_idle():
            self._settled.set()

    async def _flush_here(self, timeout: float) -> FlushReport:
        return self._report(await self._settle(timeout))

    async def _settle(self, timeout: float, *, enough: Callable[[], bool] | None = None) -> bool:
        """Wait until idle (``True``) or ``timeout`` or, if given, ``enough()`` (``False``)."""
        deadline = time.monotonic() + timeout
        if self._keeper is not None:
            await self._keeper.drain()
        self._publish_drops()
        self._flushing += 1
        self._rush.set()
        for worker in self._workers:
            worker.hurry()
        if self._forwarder is not None:
            self._forwarder.hurry()
        try:
            while not self._is_idle():
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (enough is not None and enough()):
                    return False
                self._settled.clear()
                # Woken by _check_settled; the short cap only bounds a wake-up that never comes.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(min(remaining, _SETTLE_POLL)):
                        await self._settled.wait()
            return True
        finally:
            self._flushing -= 1
            if not self._flushing and len(self._queue) < self._rush_at:
                self._rush.clear()  # the hurry ends with the flush: later runs linger again
            for worker in self._workers:
                worker.relax()

    def _totals(self) -> dict[str, int]:
        counts = self._counts
        dropped = counts["dropped_overflow"] + counts["dropped_evicted"] + counts["dropped_shutdown"]
        remote = self._remote_counts()
        dropped += remote.get("dropped_unsent", 0)
        totals = {**self._done, "written": sum(w.written for w in self._workers), "dropped": dropped}
        if self._forwarder is not None:  # runs the broker refused are in the dead-letter file too
            totals["dead_lettered"] += self._forwarder.refused
        return {**totals, "published": remote.get("published", 0)}

    def _remote_counts(self) -> dict[str, int]:
        """The forwarder's counters (none without ``broker=``)."""
        f = self._forwarder
        if f is None:
            return {}
        return {"published": f.published, "spooled": f.spooled, "recovered": f.recovered,
                "dropped_unsent": f.dropped, "forwarding": f.waiting}  # fmt: skip

    def _pending(self) -> int:
        forwarding = self._forwarder.waiting if self._forwarder is not None else 0
        return len(self._queue) + self._scoring + sum(w.pending for w in self._workers) + forwarding

    def _report(self, completed: bool) -> FlushReport:
        """A report of what changed since the previous one (runs on the loop)."""
        totals = self._totals()
        report = report_since(completed, totals, self._reported, self._pending())
        self._reported = totals
        return report

    async def _shutdown_here(self, timeout: float) -> FlushReport:
        if self._shutdown_task is None:  # a second shutdown waits for the first
            self._shutdown_task = asyncio.ensure_future(self._stop(timeout))
        return await asyncio.shield(self._shutdown_task)

    async def _stop(self, timeout: float) -> FlushReport:
        deadline = time.monotonic() + timeout
        flushed = await self._settle(timeout, enough=self._parked)
        if not flushed and self._forwarder is not None:
            self._forwarder.log_unpublished(timeout, queued=len(self._queue))
        elif not flushed:
            logger.error(
                "agentevals: shutdown timed out after %s s; %d queued run(s) and %d scoring call(s) "
                "abandoned; buffered records go to the dead-letter file %s",
                timeout,
                len(self._queue),
                self._pending_pairs,
                self.dead_letter.path,
            )
        self._stopping = True
        for task in [*self._service, *self._tasks]:
            task.cancel()
        await asyncio.gather(*self._service, *self._tasks, return_exceptions=True)
        if self._worker is not None:
            self._worker.close()
        self._abandon_queued()
        self._publish_drops()  # those offered since the flush too
        if self._forwarder is not None:  # runs held in memory are abandoned; spooled ones stay there
            grace = max(_CLOSE_GRACE, deadline - time.monotonic())
            self._done["abandoned"] += await asyncio.to_thread(self._forwarder.close, grace)
        for worker in self._workers:
            leftover = worker.take_all()
            if leftover:
                await worker.spill(leftover, RuntimeError("engine shut down before the sink took these"))
            try:
                async with asyncio.timeout(max(_CLOSE_GRACE, deadline - time.monotonic())):
                    if worker.scorers or worker.drops:
                        await worker.write_extras()
                    await worker.sink.close()
            except BaseException as err:
                logger.warning(
                    "agentevals: closing sink %s failed: %s: %s", worker.name, type(err).__name__, err
                )
        self.dead_letter.close()
        report = self._report(flushed)
        if report.abandoned or report.lost or report.dead_lettered:
            logger.warning("agentevals: engine shut down: %s", report)
        return report

    def _parked(self) -> bool:
        """Every run left is in the spool and the broker is unreachable: waiting longer only delays the
        exit (a pod's grace period is short)."""
        return self._forwarder is not None and not self._queue and self._forwarder.parked

    def _abandon_queued(self) -> None:
        """Count the runs still queued as abandoned (without the lock: a signal handler may hold it)."""
        while True:
            try:
                self._queue.popleft()
            except IndexError:
                return
            self._done["abandoned"] += 1

    # -- public control -----------------------------------------------------------------------------

    def _call(self, coro_fn: Callable[[float], Any], timeout: float) -> FlushReport:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            raise RuntimeError(
                "flush()/shutdown() was called on agentevals' own event loop; use "
                "`await engine.aflush()` / `await engine.ashutdown()` there"
            )
        future = asyncio.run_coroutine_threadsafe(coro_fn(timeout), self._loop)
        try:
            report: FlushReport = future.result(timeout + _CALL_GRACE)
        except concurrent.futures.TimeoutError:
            return self._unanswered(timeout, stopping=coro_fn == self._shutdown_here)
        return report

    def _unanswered(self, timeout: float, *, stopping: bool) -> FlushReport:
        """The engine's loop did not answer in time: a sync scorer step holds it (it cannot be
        interrupted). A shutdown gives up on it: what waits is counted as abandoned (runs) and lost
        (buffered records) from here on, and the caller (the exit) goes on."""
        queued, scoring = len(self._queue), self._scoring
        buffered = sum(w.pending for w in self._workers)
        logger.error(
            "agentevals: the engine did not answer within %s s: a sync scorer step is blocking it (make "
            "slow steps async so scorer_timeout applies); %d queued and %d scoring run(s)%s",
            timeout + _CALL_GRACE,
            queued,
            scoring,
            f" abandoned, {buffered} buffered record(s) lost" if stopping else " still waiting",
        )
        if stopping:
            self._gave_up = True
        return FlushReport(
            completed=False,
            abandoned=queued + scoring if stopping else 0,
            lost=buffered if stopping else 0,
            pending=0 if stopping else queued + scoring + buffered,
        )

    async def _acall(self, coro_fn: Callable[[float], Any], timeout: float) -> FlushReport:
        report: FlushReport
        if asyncio.get_running_loop() is self._loop:
            report = await coro_fn(timeout)
            return report
        future = asyncio.run_coroutine_threadsafe(coro_fn(timeout), self._loop)
        report = await asyncio.wrap_future(future)
        return report

    def flush(self, timeout: float = 30.0) -> FlushReport:
        """Wait until every accepted run is scored and written (or dead-lettered), at most ``timeout``
        seconds. The :class:`FlushReport` is truthy when everything settled and nothing since the
        previous report was dead-lettered, lost or abandoned."""
        return self._call(self._flush_here, check_timeout(timeout))

    async def aflush(self, timeout: float = 30.0) -> FlushReport:
        """Async :meth:`flush`, from any event loop."""
        return await self._acall(self._flush_here, check_timeout(timeout))

    def _close_intake(self) -> bool:
        # No lock: a SIGTERM handler may run this while its own thread holds the lock in submit().
        if self._closed:
            return False
        self._closed = True
        atexit.unregister(self._at_exit)
        if self._sigterm is not None:
            self._sigterm.release()
        return True

    def shutdown(self, timeout: float = 30.0) -> FlushReport:
        """Stop accepting runs, flush for at most ``timeout`` seconds, and close the sinks. What is not
        done in time is abandoned (runs) or dead-lettered (records), and counted; the
        :class:`FlushReport` says so. A second call returns an empty report."""
        timeout = check_timeout(timeout)
        if not self._close_intake():
            return FlushReport(completed=True)
        return self._call(self._shutdown_here, timeout)

    async def ashutdown(self, timeout: float = 30.0) -> FlushReport:
        """Async :meth:`shutdown`, from any event loop."""
        timeout = check_timeout(timeout)
        if not self._close_intake():
            return FlushReport(completed=True)
        return await self._acall(self._shutdown_here, timeout)

    def _at_exit(self) -> None:
        try:
            self.shutdown(self.exit_timeout)
        except Exception:
            logger.exception("agentevals: flushing the scoring engine at exit failed")

    def stats(self) -> EngineStats:
        """A snapshot of the counters and latency percentiles (see :class:`EngineStats`)."""
        with self._lock:
            counts = dict(self._counts)
            queued = len(self._queue)
            sampled = {key: self._sampled[i] for i, key in enumerate(self._entries)}
            sampled_by_rule = self._rule_counters.snapshot()
        done = dict(self._done)  # one C-level copy: consistent with itself
        skipped_by = dict(self._skipped_by)
        latencies = list(self._latencies)
        latencies.sort()
        scoring, buffered = self._scoring, sum(w.pending for w in self._workers)
        if self._gave_up:  # the shutdown gave up on a held loop: what still waits will never be done
            done["abandoned"] += queued + scoring
            done["lost"] += buffered
            queued = scoring = buffered = 0
        remote = self._remote_counts()
        dropped = counts["dropped_overflow"] + counts["dropped_evicted"] + counts["dropped_shutdown"]
        return EngineStats(
            **counts,
            **done,
            **remote,
            dropped=dropped + remote.get("dropped_unsent", 0),
            queued=queued,
            scoring=scoring,
            written={w.name: w.written for w in self._workers},
            buffered=buffered,
            latency_ms_p50=percentile(latencies, 0.50),
            latency_ms_p95=percentile(latencies, 0.95),
            latency_ms_p99=percentile(latencies, 0.99),
            sampled=sampled,
            skipped_by_scorer=skipped_by,
            budgets=self._gate.budgets() if self._gate else {},
            breakers=self._gate.breakers() if self._gate else {},
            sampled_by_rule=sampled_by_rule,
        )
