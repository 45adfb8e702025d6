"""The engine's scoring side: the background loop that takes queued runs and scores them, sync
scorers in chunks on a worker thread (``_inline.py``), the others as tasks, and the accounting per
(run, scorer) pair. ``ScoringEngine`` inherits it; its ``__init__`` sets the state declared here."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Coroutine
from typing import Any

from agentevals._engine._config import ScorerEntry
from agentevals._engine._control import EngineControl, logger
from agentevals._engine._deferred import DeferredRun
from agentevals._engine._inline import CHUNK, Chunk, InlineWorker, Pair
from agentevals._engine._sink_worker import SinkWorker
from agentevals._model._errors import RunBuildError
from agentevals._model._failure import failure_record
from agentevals._model._redact import set_active_redactor
from agentevals._model._result import ScoreRecord
from agentevals._model._run import Run
from agentevals._scoring._judge._scope import active_limits
from agentevals._scoring._limits._gate import EngineLimits
from agentevals._scoring._score_once import FailureLog, Redactor, finalize, run_failed_record, score_once
from agentevals._store._catalog_tables import ScorerInfo


class _RunState:
    """One accepted run being scored: its pairs (run x scorer) not done yet, how many were handed to
    scoring, and whether a shutdown gave it up."""

    __slots__ = ("abandoned", "handed", "left")

    def __init__(self, pairs: int) -> None:
        self.left = pairs
        self.handed = 0
        self.abandoned = False


class EngineDispatch(EngineControl):
    """Takes queued runs and scores them (a base class of :class:`~agentevals.ScoringEngine`)."""

    _all: tuple[ScorerEntry, ...]
    _inline: set[int]
    _wake: asyncio.Event
    _wake_pending: bool
    _slots: asyncio.Semaphore
    _concurrency: asyncio.Semaphore
    _scorer_limits: dict[int, asyncio.Semaphore]
    _failures: FailureLog
    _gate: EngineLimits | None
    scorer_timeout: float | None
    redact: Redactor | None
    entity: str | None
    linger: float

    # -- background loop --------------------------------------------------------------------------

    def _start(self) -> None:
        set_active_redactor(self.redact)  # judge retry logs in this engine's scoring tasks go through it
        if any(w.stores_scorers for w in self._workers):
            try:
                scorers = scorer_infos(self._entries)
            except Exception:  # never a reason not to score
                logger.exception("agentevals: the scorers could not be described for the sinks")
                scorers = []
            for worker in self._workers:
                worker.add_scorers(scorers)
        self._service = [self._loop.create_task(self._dispatch(), name="agentevals-dispatch")]
        self._service += [
            self._loop.create_task(w.run(), name=f"agentevals-sink-{w.name}") for w in self._workers
        ]

    async def _dispatch(self) -> None:
        while True:
            await self._wake.wait()
            if self.linger and not self._rush.is_set():
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.linger):
                        await self._rush.wait()
            self._wake.clear()
            if not self._flushing:
                self._rush.clear()
            # A plain store, no lock: a submit that still saw it True appended before this drain.
            self._wake_pending = False
            try:
                await self._drain()
                self._publish_drops()  # runs drop only while the queue is full: this round's
            except Exception:  # a bug of ours: keep scoring later runs; stats().unbalanced() shows the gap
                logger.exception("agentevals: the scoring loop failed; it goes on with the next runs")

    async def _drain(self) -> None:
        """Score every queued run. A method of its own so that, once it returns, no local keeps the
        last run alive while the engine waits for the next one. Sync scorers' calls gather in chunks
        scored on the worker thread (:meth:`_score_chunk`); the others run as tasks on this loop."""
        chunk: list[Pair] = []
        while True:
            try:
                item, entries, submitted_at = self._queue.popleft()
            except IndexError:
                break
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
                "ScorerEntry timeout or the engine's scorer_timeout if it needs longer)"
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
                    await self._deliver(failure, stand_in, submitted_at)
                finally:
                    self._pair_done(state)
            return None

    def _track(self, call: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(call)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _timeout_of(self, entry: ScorerEntry) -> float | None:
        return entry.timeout if entry.timeout is not None else self.scorer_timeout

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
            await self._deliver(record, run, submitted_at)
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
        full = [worker for worker in self._workers if not worker.offer(record)]
        if full:
            return self._put_then_done(full, record, state)
        self._pair_done(state)
        return None

    async def _put_then_done(self, workers: list[SinkWorker], record: ScoreRecord, state: _RunState) -> None:
        try:
            await _put_all(workers, record)
        finally:
            self._pair_done(state)

    def _accounted(self, record: ScoreRecord, run: Run, submitted_at: float) -> ScoreRecord:
        """``record`` finalized (entity, redaction) and counted in the stats."""
        record = finalize(record, run.entity or self.entity, self.redact)
        self._latencies.append((time.perf_counter() - submitted_at) * 1000)
        outcome = record.outcome
        self._done[outcome] += 1
        if outcome == "skipped":
            self._skipped_by[record.scorer_id] = self._skipped_by.get(record.scorer_id, 0) + 1
        return record

    async def _deliver(self, record: ScoreRecord, run: Run, submitted_at: float) -> None:
        await _put_all(self._workers, self._accounted(record, run, submitted_at))

    def _pair_done(self, state: _RunState) -> None:
        """One (run, scorer) pair is scored and its record handed to the sinks (or it was abandoned)."""
        self._pending_pairs -= 1
        state.left -= 1
        if not state.left and not state.abandoned:
            self._done["finished"] += 1
            self._scoring -= 1
        if not self._pending_pairs:
            self._check_settled()

    def _abandon(self, state: _RunState, unstarted: int) -> None:
        """A shutdown out of time gives up ``state``'s run; ``unstarted`` of its pairs never began."""
        if not state.abandoned and state.left:
            state.abandoned = True
            self._done["abandoned"] += 1
            self._scoring -= 1
        if unstarted:
            self._pending_pairs -= unstarted
            state.left -= unstarted


def scorer_infos(entries: dict[str, ScorerEntry]) -> list[ScorerInfo]:
    """The attached scorers as a store's scorers table keeps them (``source="live"``)."""
    return [
        ScorerInfo(
            scorer_id=key,
            scorer_name=entry.scorer.name,
            scorer_version=entry.scorer.version,
            source="live",
            threshold_min=None if entry.threshold is None else entry.threshold.min,
            threshold_max=None if entry.threshold is None else entry.threshold.max,
        )
        for key, entry in entries.items()
    ]


async def _put_all(workers: list[SinkWorker], record: ScoreRecord) -> None:
    """Hand ``record`` to each sink worker, waiting where a buffer is full; when cancelled, the sinks not
    reached yet still get it in their buffers (to spill at shutdown)."""
    left = iter(workers)
    try:
        for worker in left:
            await worker.put(record)
    except asyncio.CancelledError:  # `put` buffered it; the other sinks get it too, to spill
        for worker in left:
            worker.buffer.append(record)
        raise
