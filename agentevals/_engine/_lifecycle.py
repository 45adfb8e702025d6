"""An engine's lifecycle: flush and shutdown (blocking from any thread, or awaited from any event loop),
the shutdown at interpreter exit and on SIGTERM, and the reports of what settled since the last one."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from agentevals._engine._accounts import Accounts
from agentevals._engine._delivery import CLOSE_GRACE, Delivery
from agentevals._engine._intake import Intake
from agentevals._engine._options import ExitOptions, check_seconds
from agentevals._engine._signals import install_sigterm_flush
from agentevals._engine._stage import Stage
from agentevals._engine._stats import EngineStats, FlushReport, report_since

logger = logging.getLogger("agentevals.engine")

_SETTLE_POLL = 0.05  # seconds a flush waits for a wake-up before it checks again anyway
_CALL_GRACE = 2.0  # seconds a blocking flush/shutdown waits past its timeout for the engine's answer

_Waiting = Callable[[float], Coroutine[Any, Any, FlushReport]]


class Lifecycle:
    """Flushes and stops an engine's parts; registered for the interpreter's exit (and SIGTERM) until
    the engine shut down."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        intake: Intake,
        stage: Stage,
        delivery: Delivery,
        accounts: Accounts,
        exit: ExitOptions,
    ) -> None:
        self._loop = loop
        self._intake = intake
        self._stage = stage
        self._delivery = delivery
        self._accounts = accounts
        self._exit_timeout = exit.timeout
        self._flushing = 0
        self._settled = asyncio.Event()  # set when a flush waits and the engine has become idle
        self._shutdown_task: asyncio.Future[FlushReport] | None = None
        self._reported: dict[str, int] = {}
        self._gave_up = False  # a shutdown stopped waiting for a loop held by a sync step
        atexit.register(self._at_exit)
        self._sigterm = install_sigterm_flush(self, exit.timeout) if exit.handle_sigterm else None

    # -- progress -----------------------------------------------------------------------------------

    def _is_idle(self) -> bool:
        return not self._intake.queued and self._stage.idle and self._delivery.idle

    def check_settled(self) -> None:
        """Wake a waiting flush as soon as nothing is left (no polling delay); on the engine's loop."""
        if self._flushing and self._is_idle():
            self._settled.set()

    def progressed_elsewhere(self) -> None:
        """:meth:`check_settled` for a thread other than the engine's (the forwarder's)."""
        if self._flushing:
            self._loop.call_soon_threadsafe(self.check_settled)

    # -- on the engine's loop -----------------------------------------------------------------------

    async def _flush_here(self, timeout: float) -> FlushReport:
        return self._report(await self._settle(timeout))

    async def _settle(self, timeout: float, *, enough: Callable[[], bool] | None = None) -> bool:
        """Wait until idle (``True``) or ``timeout`` or, if given, ``enough()`` (``False``)."""
        deadline = time.monotonic() + timeout
        await self._delivery.drain_keeper()
        self._delivery.add_drops(self._intake.take_drops())
        self._flushing += 1
        self._intake.hurry()
        self._delivery.hurry()
        self._stage.hurry()
        try:
            while not self._is_idle():
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (enough is not None and enough()):
                    return False
                self._settled.clear()
                # Woken by check_settled; the short cap only bounds a wake-up that never comes.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(min(remaining, _SETTLE_POLL)):
                        await self._settled.wait()
            return True
        finally:
            self._flushing -= 1
            self._intake.relax()
            self._delivery.relax()

    def _report(self, completed: bool) -> FlushReport:
        """A report of what changed since the previous one."""
        totals = self._accounts.totals()
        report = report_since(completed, totals, self._reported, self._accounts.pending())
        self._reported = totals
        return report

    async def _shutdown_here(self, timeout: float) -> FlushReport:
        if self._shutdown_task is None:  # a second shutdown waits for the first
            self._shutdown_task = asyncio.ensure_future(self._stop(timeout))
        return await asyncio.shield(self._shutdown_task)

    async def _stop(self, timeout: float) -> FlushReport:
        deadline = time.monotonic() + timeout
        flushed = await self._settle(timeout, enough=self._parked)
        if not flushed:
            dead_letter = self._delivery.dead_letter.path
            self._stage.timed_out(timeout, queued=self._intake.queued, dead_letter=dead_letter)
        tasks = [*self._stage.cancel(), *self._delivery.cancel()]
        await asyncio.gather(*tasks, return_exceptions=True)
        self._intake.abandon_queued()
        self._delivery.add_drops(self._intake.take_drops())  # those offered since the flush too
        await self._stage.close(max(CLOSE_GRACE, deadline - time.monotonic()))
        await self._delivery.close(deadline)
        report = self._report(flushed)
        if report.abandoned or report.lost or report.dead_lettered:
            logger.warning("agentevals: engine shut down: %s", report)
        return report

    def _parked(self) -> bool:
        """Every run left is in the spool and the broker is unreachable: waiting longer only delays the
        exit (a pod's grace period is short)."""
        return not self._intake.queued and self._stage.parked

    # -- from the caller's thread or loop -----------------------------------------------------------

    def _call(self, waiting: _Waiting, timeout: float) -> FlushReport:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            raise RuntimeError(
                "flush()/shutdown() was called on agentevals' own event loop; use "
                "`await engine.aflush()` / `await engine.ashutdown()` there"
            )
        future = asyncio.run_coroutine_threadsafe(waiting(timeout), self._loop)
        try:
            return future.result(timeout + _CALL_GRACE)
        except concurrent.futures.TimeoutError:
            return self._unanswered(timeout, stopping=waiting == self._shutdown_here)

    def _unanswered(self, timeout: float, *, stopping: bool) -> FlushReport:
        """The engine's loop did not answer in time: a sync scorer step holds it (it cannot be
        interrupted). A shutdown gives up on it: what waits is counted as abandoned (runs) and lost
        (buffered records) from here on, and the caller (the exit) goes on."""
        queued, scoring = self._intake.queued, self._stage.pending
        buffered = self._delivery.buffered
        logger.error(
            "agentevals: the engine did not answer within %s s: a sync scorer step is blocking it (make "
            "slow steps async so the scoring timeout applies); %d queued and %d scoring run(s)%s",
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

    async def _acall(self, waiting: _Waiting, timeout: float) -> FlushReport:
        if asyncio.get_running_loop() is self._loop:
            return await waiting(timeout)
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(waiting(timeout), self._loop))

    def flush(self, timeout: float = 30.0) -> FlushReport:
        """See :meth:`ScoringEngine.flush <agentevals.ScoringEngine.flush>`."""
        return self._call(self._flush_here, check_seconds(timeout))

    async def aflush(self, timeout: float = 30.0) -> FlushReport:
        return await self._acall(self._flush_here, check_seconds(timeout))

    def _close_intake(self) -> bool:
        # No lock: a SIGTERM handler may run this while its own thread holds the lock in submit().
        if not self._intake.close():
            return False
        atexit.unregister(self._at_exit)
        if self._sigterm is not None:
            self._sigterm.release()
        return True

    def shutdown(self, timeout: float = 30.0) -> FlushReport:
        """See :meth:`ScoringEngine.shutdown <agentevals.ScoringEngine.shutdown>`."""
        timeout = check_seconds(timeout)
        if not self._close_intake():
            return FlushReport(completed=True)
        return self._call(self._shutdown_here, timeout)

    async def ashutdown(self, timeout: float = 30.0) -> FlushReport:
        timeout = check_seconds(timeout)
        if not self._close_intake():
            return FlushReport(completed=True)
        return await self._acall(self._shutdown_here, timeout)

    def _at_exit(self) -> None:
        try:
            self.shutdown(self._exit_timeout)
        except Exception:
            logger.exception("agentevals: flushing the scoring engine at exit failed")

    def stats(self) -> EngineStats:
        return self._accounts.stats(gave_up=self._gave_up)
