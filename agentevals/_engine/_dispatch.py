"""The engine's scoring: a loop on the engine's event loop takes the queued runs and scores them, sync
scorers in chunks on a worker thread (``_inline``), the others as tasks under the concurrency limits,
the timeouts and the judge limits (budgets, breakers); each (run, scorer) pair is accounted until its
record is handed to delivery."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from agentevals._engine._config import ScorerEntry
from agentevals._engine._delivery import Delivery, SinkWriter
from agentevals._engine._inline import CHUNK, Chunk, InlineWorker, Pair
from agentevals._engine._intake import Intake
from agentevals._engine._options import ScoringOptions
from agentevals._engine._stats import percentile
from agentevals._model._deferred_run import DeferredRun
from agentevals._model._errors import RunBuildError
from agentevals._model._failure import failure_record
from agentevals._model._redact import set_active_redactor
from agentevals._model._result import ScoreRecord
from agentevals._model._run import Run
from agentevals._scoring._judge._scope import active_limits
from agentevals._scoring._limits._gate import EngineLimits
from agentevals._scoring._score_once import FailureLog, Redactor, finalize, run_failed_record, score_once

logger = logging.getLogger("agentevals.engine")

_DONE = ("scored", "failed", "skipped", "finished", "abandoned")


class _RunState:
    """One accepted run being scored: its pairs (run x scorer) not done yet, how many were handed to
    scoring, and whether a shutdown gave it up."""

    __slots__ = ("abandoned", "handed", "left")

    def __init__(self, pairs: int) -> None:
        self.left = pairs
        self.handed = 0
        self.abandoned = False


class Dispatch:
    """Scores the runs the intake accepted and hands the records to delivery (a :class:`Stage`).

    Its counters are written only on the engine's loop (``stats()`` copies them whole). ``on_idle`` is
    called when the last pair under way is done (a waiting flush may look again).
    """

    def __init__(
        self,
        entries: tuple[ScorerEntry, ...],
        options: ScoringOptions,
        loop: asyncio.AbstractEventLoop,
        *,
        intake: Intake,
        delivery: Delivery,
        gate: EngineLimits | None,
        entity: str | None,
        redact: Redactor | None,
        on_idle: Callable[[], None],
    ) -> None:
        self._intake = intake
        self._delivery = delivery
        self._gate = gate
        self._entity = entity
        self._redact = redact
        self._on_idle = on_idle
        self._timeout = options.timeout
        self._loop = loop
        self._inline = {id(e) for e in entries if e.scorer.is_sync}
        self._slots = asyncio.Semaphore(options.max_concurrency * 4)
        self._concurrency = asyncio.Semaphore(options.max_concurrency)
        self._scorer_limits = {
            id(e): asyncio.Semaphore(e.max_concurrency) for e in entries if e.max_concurrency is not None
        }
        self._failures = FailureLog(redact)  # scorer failures in the log too (throttled)
        self._done = dict.fromkeys(_DONE, 0)
        self._skipped_by = {e.scorer.id: 0 for e in entries}
        self._latencies: deque[float] = deque(maxlen=10_000)
        self._worker: InlineWorker | None = None  # the thread scoring sync scorers, made on first use
        self._pending_pairs = 0
        self._scoring = 0  # runs taken from the queue, not finished or abandoned yet
        self._stopping = False  # the shutdown is cancelling the engine's tasks
        self._service: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    # -- the engine's loop ------------------------------------------------------------------------

    def start(self) -> None:
        set_active_redactor(self._redact)  # judge retry logs in this engine's scoring tasks go through it
        self._service = self._loop.create_task(self._dispatch(), name="agentevals-dispatch")

    async def _dispatch(self) -> None:
        while True:
            await self._intake.gathered()
            try:
                await self._drain()
                # Runs drop only while the queue is full: this round's go to the sinks that store them.
                self._delivery.add_drops(self._intake.take_drops())
            except Exception:  # a bug of ours: keep scoring later runs; stats().unbalanced() shows the gap
                logger.exception("agentevals: the scoring loop failed; it goes on with the next runs")

    async def _drain(self) -> None:
        """Score every queued run. A method of its own so that, once it returns, no local keeps the
        last run alive while the engine waits for the next one. Sync scorers' calls gather in chunks
        scored on the worker thread (:meth:`_score_chunk`); the others run as tasks on this loop."""
        chunk: list[Pair] = []
        take = self._intake.take
        while (queued := take()) is not None:
            item, entries, submitted_at = queued
            self._pending_pairs += len(entries)
            self._scoring += 1
            state = _RunState(len(entries))
            try:
                if isinstance(item, Run):
                    run: Run | None = item
                else:
                    run = await self._materialize(item, entries, submitted_at, state)
                if run is None:
                    continue
                failed = run.error is not None
                for entry in entries:
                    if failed and not entry.score_errors:  # the agent raised: skipped, not scored
                        state.handed += 1
                        skipped = run_failed_record(run, entry.scorer)
                        unfinished = self._offer(skipped, run, submitted_at, state)
                        if unfinished is not None:
                            await unfinished
                    elif id(entry) in self._inline:
                        state.handed += 1
                        chunk.append((run, entry, submitted_at, state, self._timeout_of(entry)))
                        if len(chunk) == CHUNK:
                            pairs, chunk = chunk, []
                            await self._score_chunk(pairs)
                    else:
                        await self._slots.acquire()
                        state.handed += 1
                        self._track(self._score(run, entry, submitted_at, state))
            except asyncio.CancelledError:  # the shutdown ran out of time: the rest is abandoned
                self._abandon(state, len(entries) - state.handed)
                self._abandon_pairs(chunk)
                raise
        if chunk:
            await self._score_chunk(chunk)

    async def _score_chunk(self, pairs: list[Pair]) -> None:
        """Score sync scorer calls on the worker thread, waiting with a timer set to the deadline of
        the call under way; a stuck call becomes a ``TimeoutError`` record and the rest go on."""
        delivered = 0
        chunk: Chunk | None = None
        try:
            while pairs:
                chunk = Chunk(pairs)
                if self._worker is None:
                    self._worker = InlineWorker()
                done = asyncio.wrap_future(self._worker.submit(chunk.run(self._failures)))
                stuck = None
                while not done.done():
                    await asyncio.wait((done,), timeout=chunk.wait_for())
                    if not done.done() and (stuck := chunk.overdue()) is not None:
                        break
                records: list[ScoreRecord] = chunk.records
                error = done.exception() if done.done() else None
                if error is not None:  # not a scorer's error (those are records): ours
                    logger.error("agentevals: scoring sync scorers failed", exc_info=error)
                    stuck = len(records)
                if stuck is not None:
                    self._worker = None  # abandoned with its stuck call; the rest go to a fresh one
                    run, entry, _, _, timeout = pairs[stuck]
                    records = [*records, self._overdue(run, entry, timeout, error)]
                for record in records:
                    run, _, submitted_at, state, _ = pairs[delivered]
                    delivered += 1
                    unfinished = self._offer(record, run, submitted_at, state)
                    if unfinished is not None:
                        await unfinished
                pairs, delivered = pairs[delivered:], 0
        except asyncio.CancelledError:
            if chunk is not None:
                chunk.stop = True
            self._abandon_pairs(pairs[delivered:])
            raise

    def _overdue(
        self, run: Run, entry: ScorerEntry, timeout: float | None, error: BaseException | None
    ) -> ScoreRecord:
        """The error record of a sync scorer call that overran its timeout (abandoned on its thread)."""
        if error is None:
            error = TimeoutError(
                f"scorer {entry.scorer.id!r} did not finish within {timeout} s; a sync step cannot be "
                "interrupted, so its thread was abandoned (make slow steps async, or raise the "
                "ScorerEntry timeout or the engine's ScoringOptions.timeout if it needs longer)"
            )
        failure = failure_record(
            scorer=entry.scorer,
            run=run,
            error=error,
            source="live",
            duration_ms=(timeout or 0.0) * 1000,
        )
        self._failures.note(failure, error)
        return failure

    def _abandon_pairs(self, pairs: list[Pair]) -> None:
        """Handed sync scorer calls whose records will never come (a shutdown out of time)."""
        for _, _, _, state, _ in pairs:
            self._abandon(state, 0)
            self._pair_done(state)

    async def _materialize(
        self, deferred: DeferredRun, entries: tuple[ScorerEntry, ...], submitted_at: float, state: _RunState
    ) -> Run | None:
        """Build a deferred run; if that fails, each sampled scorer gets an error record instead."""
        try:
            return deferred.materialize()
        except BaseException as err:  # the builder's failure, whatever it is, becomes error records
            logger.warning("agentevals: building run %s failed; error records written", deferred.run_id)
            error = RunBuildError(f"{type(err).__name__}: {err}")
            error.__cause__ = err
            stand_in = deferred.placeholder()
            for entry in entries:
                state.handed += 1
                try:
                    failure = failure_record(
                        scorer=entry.scorer,
                        run=stand_in,
                        error=error,
                        source="live",
                    )
                    await self._delivery.put(self._accounted(failure, stand_in, submitted_at))
                finally:
                    self._pair_done(state)
            return None

    def _track(self, call: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(call)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _timeout_of(self, entry: ScorerEntry) -> float | None:
        return entry.timeout if entry.timeout is not None else self._timeout

    async def _score(self, run: Run, entry: ScorerEntry, submitted_at: float, state: _RunState) -> None:
        record: ScoreRecord | None = None
        try:
            limit = self._scorer_limits.get(id(entry))
            timeout = self._timeout_of(entry)
            try:
                if self._gate is not None:  # this task's judge calls ask the engine's budgets and breakers
                    active_limits.set(self._gate.scope(entry.scorer.id, timeout))
                if limit is None:
                    record = await score_once(run, entry.scorer, timeout, self._concurrency, self._failures)
                else:
                    async with limit:
                        record = await score_once(
                            run, entry.scorer, timeout, self._concurrency, self._failures
                        )
            except asyncio.CancelledError as err:
                if self._stopping:
                    raise
                record = self._self_cancelled(run, entry, err)
            await self._delivery.put(self._accounted(record, run, submitted_at))
        except asyncio.CancelledError:
            if record is None:
                self._abandon(state, 0)
            raise
        finally:
            self._pair_done(state)
            self._slots.release()

    def _self_cancelled(self, run: Run, entry: ScorerEntry, error: BaseException) -> ScoreRecord:
        """The error record of a scorer that cancelled its own task (not the engine: it is not stopping)."""
        task = asyncio.current_task()
        if task is not None:
            while task.uncancel():
                pass
        return failure_record(
            scorer=entry.scorer,
            run=run,
            error=error,
            source="live",
        )

    def _offer(
        self, record: ScoreRecord, run: Run, submitted_at: float, state: _RunState
    ) -> Coroutine[Any, Any, None] | None:
        """Account ``record`` and hand it to every sink without waiting; returns what is left to await,
        if anything: a sink whose buffer is full."""
        record = self._accounted(record, run, submitted_at)
        full = self._delivery.offer(record)
        if full:
            return self._put_then_done(full, record, state)
        self._pair_done(state)
        return None

    async def _put_then_done(self, writers: list[SinkWriter], record: ScoreRecord, state: _RunState) -> None:
        try:
            await self._delivery.put(record, writers)
        finally:
            self._pair_done(state)

    def _accounted(self, record: ScoreRecord, run: Run, submitted_at: float) -> ScoreRecord:
        """``record`` finalized (entity, redaction) and counted in the stats."""
        record = finalize(record, run.entity or self._entity, self._redact)
        self._latencies.append((time.perf_counter() - submitted_at) * 1000)
        outcome = record.outcome
        self._done[outcome] += 1
        if outcome == "skipped":
            self._skipped_by[record.scorer_id] = self._skipped_by.get(record.scorer_id, 0) + 1
        return record

    def _pair_done(self, state: _RunState) -> None:
        """One (run, scorer) pair is scored and its record handed to the sinks (or it was abandoned)."""
        self._pending_pairs -= 1
        state.left -= 1
        if not state.left and not state.abandoned:
            self._done["finished"] += 1
            self._scoring -= 1
        if not self._pending_pairs:
            self._on_idle()

    def _abandon(self, state: _RunState, unstarted: int) -> None:
        """A shutdown out of time gives up ``state``'s run; ``unstarted`` of its pairs never began."""
        if not state.abandoned and state.left:
            state.abandoned = True
            self._done["abandoned"] += 1
            self._scoring -= 1
        if unstarted:
            self._pending_pairs -= unstarted
            state.left -= unstarted

    # -- flush and shutdown (a Stage) ---------------------------------------------------------------

    @property
    def idle(self) -> bool:
        return self._pending_pairs == 0

    @property
    def pending(self) -> int:
        return self._scoring

    @property
    def parked(self) -> bool:
        return False

    def hurry(self) -> None:
        """Nothing to hurry: the intake stops lingering and the dispatch scores what it gets at once."""

    def timed_out(self, timeout: float, *, queued: int, dead_letter: Path) -> None:
        logger.error(
            "agentevals: shutdown timed out after %s s; %d queued run(s) and %d scoring call(s) "
            "abandoned; buffered records go to the dead-letter file %s",
            timeout,
            queued,
            self._pending_pairs,
            dead_letter,
        )

    def cancel(self) -> list[asyncio.Task[None]]:
        self._stopping = True
        tasks = [*([self._service] if self._service is not None else []), *self._tasks]
        for task in tasks:
            task.cancel()
        return tasks

    async def close(self, grace: float) -> None:
        if self._worker is not None:
            self._worker.close()

    # -- counters -----------------------------------------------------------------------------------

    def totals(self) -> dict[str, int]:
        done = self._done
        return {"scored": done["scored"], "failed": done["failed"], "skipped": done["skipped"],
                "abandoned": done["abandoned"]}  # fmt: skip

    def stats(self) -> dict[str, Any]:
        done = dict(self._done)  # one C-level copy: consistent with itself
        skipped_by = dict(self._skipped_by)
        latencies = list(self._latencies)
        latencies.sort()
        return {
            **done,
            "scoring": self._scoring,
            "skipped_by_scorer": skipped_by,
            "latency_ms_p50": percentile(latencies, 0.50),
            "latency_ms_p95": percentile(latencies, 0.95),
            "latency_ms_p99": percentile(latencies, 0.99),
        }
