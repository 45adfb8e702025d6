"""``ScoringEngine``: score finished runs in the background, off the agent's hot path."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, Literal

from agentevals._engine._config import ScorerEntry, check_options, normalize_scorers
from agentevals._engine._deferred import DeferredRun
from agentevals._engine._scoring import Redactor, finalize, score_inline, score_once
from agentevals._engine._sink_worker import SinkWorker
from agentevals._engine._stats import EngineStats, percentile
from agentevals._errors import RunBuildError
from agentevals._failure import failure_record
from agentevals._result import ScoreFailure, ScoreRecord
from agentevals._run import Run
from agentevals._sampling import sample_point
from agentevals._sync import background_loop
from agentevals.sinks._logging import LoggingSink
from agentevals.sinks._protocol import Sink, as_sink
from agentevals.sinks._retry import DEFAULT_DEAD_LETTER, DeadLetter, RetryPolicy

logger = logging.getLogger("agentevals.engine")

Overflow = Literal["drop_newest", "drop_oldest"]
_Item = tuple[Run | DeferredRun, tuple[ScorerEntry, ...], float]
_INLINE_BURST = 64  # inline scorer calls between yields to the rest of the loop
_SETTLE_POLL = 0.05  # seconds a flush waits for a wake-up before it checks again anyway


class ScoringEngine:
    """Scores finished runs in the background and sends every result (or error record) to the sinks.

    ``submit(run)`` decides sampling per scorer, appends to a bounded queue and returns in microseconds;
    it never blocks and never raises. Scoring runs on agentevals' own event loop on a daemon thread (the
    same loop in sync apps, async apps and Jupyter; a caller's loop may close before scoring ends).

    - ``scorers``: ``{"relevancy": {"scorer": s, "sampling": {"type": "ratio", "rate": 0.25}}}``, a list
      of scorers, :class:`ScorerEntry` objects, or one scorer. Ratio sampling is deterministic by
      ``trace_id or run_id``.
    - ``sinks``: :class:`~agentevals.sinks.Sink` objects or plain callables taking one record; default
      ``[LoggingSink()]`` (use ``SQLiteSink("agentevals.db")`` to keep results).
    - ``queue_size`` / ``overflow``: at most ``queue_size`` runs wait; when full, ``"drop_newest"`` (the
      default) refuses the new run, ``"drop_oldest"`` evicts the oldest. Every drop is counted.
    - ``max_concurrency``: scorer calls at once (each :class:`ScorerEntry` may set its own lower limit);
      ``scorer_timeout``: seconds before a scorer call becomes a ``TimeoutError`` record. A scorer's
      *sync* step blocks the loop and cannot be timed out, so make slow steps ``async``.
    - ``redact``: ``(record) -> record`` applied before any sink, e.g. to mask emails (below).
    - ``entity``: the agent or chain name for records whose run has none.
    - ``linger``: seconds the engine lets runs gather before scoring them as one batch (less switching
      with the agent's thread, warm caches), cut short when the queue is half full or a flush waits.
    - Sink writes are batched (``batch_size`` records or ``linger`` seconds), retried per ``retry``
      and finally appended to ``dead_letter`` (JSONL; re-send with :func:`agentevals.sinks.replay`).

    ``shutdown()`` runs at interpreter exit, so a normal exit loses nothing that was accepted.

    >>> import re
    >>> from agentevals import ScoringEngine, Run, create_scorer
    >>> from agentevals.sinks import MemorySink
    >>> EMAIL = re.compile(r"[\\w.+-]+@[\\w-]+\\.[\\w.]+")
    >>> def mask_emails(record):
    ...     return record.model_copy(update={"input": EMAIL.sub("<email>", str(record.input))})
    >>> memory = MemorySink()
    >>> scorer = create_scorer(id="len").generate_score(lambda run, **_: float(len(run.output_text) < 50))
    >>> scorers = {"len": {"scorer": scorer, "sampling": {"type": "ratio", "rate": 1.0}}}
    >>> engine = ScoringEngine(scorers, sinks=[memory], redact=mask_emails)
    >>> engine.submit(Run(input="mail me at ann@example.com", output="ok"))
    True
    >>> engine.shutdown()
    True
    >>> memory.records[0].input, memory.records[0].score, memory.records[0].source
    ('mail me at <email>', 1.0, 'live')
    """

    def __init__(
        self,
        scorers: Mapping[str, Any] | Sequence[Any] | Any,
        *,
        sinks: Sequence[Sink | Callable[..., Any]] | None = None,
        queue_size: int = 10_000,
        overflow: Overflow = "drop_newest",
        max_concurrency: int = 16,
        scorer_timeout: float | None = 60.0,
        redact: Redactor | None = None,
        entity: str | None = None,
        batch_size: int = 256,
        linger: float = 0.2,
        sink_buffer: int = 10_000,
        retry: RetryPolicy | None = None,
        dead_letter: str | os.PathLike[str] = DEFAULT_DEAD_LETTER,
        exit_timeout: float = 30.0,
    ) -> None:
        self._entries = normalize_scorers(scorers)
        check_options(
            queue_size=queue_size,
            max_concurrency=max_concurrency,
            batch_size=batch_size,
            sink_buffer=sink_buffer,
            overflow=overflow,
            scorer_timeout=scorer_timeout,
            linger=linger,
            redact=redact,
        )
        self.queue_size = queue_size
        self.overflow: Overflow = overflow
        self.max_concurrency = max_concurrency
        self.scorer_timeout = scorer_timeout
        self.redact = redact
        self.entity = entity
        self.exit_timeout = exit_timeout
        self.linger = linger
        self.sinks: list[Sink] = [as_sink(s) for s in (sinks if sinks is not None else [LoggingSink()])]
        self.dead_letter = DeadLetter(dead_letter)
        self._all = tuple(self._entries.values())
        self._ratio_needed = any(e.sampling.kind == "ratio" for e in self._all)
        self._custom_needed = any(e.sampling.kind == "custom" for e in self._all)
        self._index = {id(e): i for i, e in enumerate(self._all)}
        self._inline = {id(e) for e in self._all if e.scorer.is_sync}

        self._lock = threading.Lock()
        self._queue: deque[_Item] = deque()
        self._closed = False
        self._wake_pending = False
        self._rush_at = max(1, queue_size // 2)
        self._flushing = 0
        self._counts = dict.fromkeys(
            ("submitted", "accepted", "sampled_out", "dropped", "invalid", "refused", "scored", "failed",
             "sink_errors", "dead_lettered", "lost"),
            0,
        )  # fmt: skip
        self._sampled = [0] * len(self._all)
        self._latencies: deque[float] = deque(maxlen=10_000)
        self._pending_pairs = 0
        self._settled = asyncio.Event()  # set when a flush waits and the engine has become idle

        self._loop = background_loop()
        self._wake = asyncio.Event()
        self._rush = asyncio.Event()  # score now: the queue is half full, or a flush waits
        self._slots = asyncio.Semaphore(max_concurrency * 4)
        self._concurrency = asyncio.Semaphore(max_concurrency)
        self._scorer_limits = {
            id(e): asyncio.Semaphore(e.max_concurrency) for e in self._all if e.max_concurrency is not None
        }
        policy = retry or RetryPolicy()
        self._workers = [
            SinkWorker(
                sink,
                batch_size=batch_size,
                linger=linger,
                max_buffer=sink_buffer,
                retry=policy,
                dead_letter=self.dead_letter,
                on_error=self._on_sink_error,
                on_dead_letter=self._on_dead_letter,
                on_written=self._check_settled,
            )
            for sink in self.sinks
        ]
        self._tasks: set[asyncio.Task[None]] = set()
        self._service: list[asyncio.Task[None]] = []
        self._loop.call_soon_threadsafe(self._start)
        atexit.register(self._at_exit)

    @property
    def scorer_ids(self) -> list[str]:
        """The ids of the attached scorers (the ids their records carry)."""
        return list(self._entries)

    # -- hot path ---------------------------------------------------------------------------------

    def submit(self, run: Run) -> bool:
        """Offer a finished run; ``True`` when queued for at least one scorer.

        ``False`` when every scorer sampled it out, the queue was full (``drop_newest``), the input was
        not a run (logged), or the engine is shut down. Never blocks, never raises.
        """
        try:
            return self._submit(run)
        except Exception:  # the agent must never see our failure
            logger.exception("agentevals: submit failed unexpectedly; run not scored")
            with self._lock:
                self._counts["invalid"] += 1
            return False

    def submit_lazy(self, build: Callable[[], Run], *, run_id: str, trace_id: str | None = None) -> bool:
        """Offer a run by its ids; ``build()`` makes the :class:`Run` later, on the engine's thread, and
        only if a scorer samples it. Integrations use it to keep the agent's thread to bookkeeping.

        ``build`` must not depend on objects the caller changes afterwards (copy mutable lists first).
        With a custom sampler attached, the run is built here, since the sampler needs it. A failing
        ``build`` gives each sampled scorer an error record (``RunBuildError``); a scorer with a custom
        sampler counts as sampled then, so the failure is seen. Never raises.
        """
        try:
            return self._submit(DeferredRun(build, str(run_id), trace_id))
        except Exception:  # the agent must never see our failure
            logger.exception("agentevals: submit_lazy failed unexpectedly; run not scored")
            with self._lock:
                self._counts["invalid"] += 1
            return False

    def _submit(self, run: Any) -> bool:
        if not isinstance(run, Run | DeferredRun):
            run = self._coerce(run)
            if run is None:
                return False
        # A custom sampler needs the whole run; when it cannot be built, the scorer reports that instead.
        unbuilt = False
        if self._custom_needed and isinstance(run, DeferredRun):
            try:
                run = run.materialize()
            except Exception as err:
                run, unbuilt = run.failing(err), True
        point = sample_point(run.trace_id or run.run_id) if self._ratio_needed else None
        chosen: list[ScorerEntry] = []
        for entry in self._all:
            sampling = entry.sampling
            if sampling.kind == "none" or (
                sampling.kind == "ratio" and point is not None and point < sampling.rate
            ):
                chosen.append(entry)
            elif sampling.kind == "custom":
                if unbuilt:
                    chosen.append(entry)
                    continue
                assert isinstance(run, Run)
                try:
                    if sampling.sampled(run):
                        chosen.append(entry)
                except Exception:
                    logger.exception(
                        "agentevals: the sampler of scorer %s raised; run not sampled", entry.scorer.id
                    )
        counts = self._counts
        with self._lock:
            counts["submitted"] += 1
            if self._closed:
                counts["refused"] += 1
                return False
            if not chosen:
                counts["sampled_out"] += 1
                return False
            if len(self._queue) >= self.queue_size:
                counts["dropped"] += 1
                if self.overflow == "drop_newest":
                    return False
                if self._queue:
                    self._queue.popleft()
            for entry in chosen:
                self._sampled[self._index[id(entry)]] += 1
            counts["accepted"] += 1
            # The usual case, every scorer chosen, shares one tuple: less for the collector to track.
            entries = self._all if len(chosen) == len(self._all) else tuple(chosen)
            self._queue.append((run, entries, time.perf_counter()))
            wake = not self._wake_pending
            self._wake_pending = True
            rush = len(self._queue) == self._rush_at
        if wake:
            self._loop.call_soon_threadsafe(self._wake.set)
        if rush:
            self._loop.call_soon_threadsafe(self._rush.set)
        return True

    def _coerce(self, run: Any) -> Run | None:
        try:
            if isinstance(run, Mapping):
                return Run.model_validate(dict(run))
            raise TypeError(f"expected an agentevals.Run, got {type(run).__name__}")
        except Exception as err:
            with self._lock:
                self._counts["submitted"] += 1
                self._counts["invalid"] += 1
            logger.warning("agentevals: submit() ignored an invalid run: %s", err)
            return None

    # -- background loop --------------------------------------------------------------------------

    def _start(self) -> None:
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
            with self._lock:
                self._wake_pending = False
            await self._drain()

    async def _drain(self) -> None:
        """Score every queued run. A method of its own so that, once it returns, no local keeps the
        last run alive while the engine waits for the next one."""
        inline_calls = 0
        while True:
            try:
                item, entries, submitted_at = self._queue.popleft()
            except IndexError:
                return
            self._pending_pairs += len(entries)
            run = item if isinstance(item, Run) else await self._materialize(item, entries, submitted_at)
            if run is None:
                continue
            for entry in entries:
                if id(entry) in self._inline:
                    unfinished = self._score_inline(run, entry, submitted_at)
                    if unfinished is not None:
                        await unfinished
                    inline_calls += 1
                    if inline_calls % _INLINE_BURST == 0:
                        await asyncio.sleep(0)  # let sink writers and judge replies in
                else:
                    await self._slots.acquire()
                    self._track(self._score(run, entry, submitted_at))

    async def _materialize(
        self, deferred: DeferredRun, entries: tuple[ScorerEntry, ...], submitted_at: float
    ) -> Run | None:
        """Build a deferred run; if that fails, each sampled scorer gets an error record instead."""
        try:
            return deferred.materialize()
        except Exception as err:
            logger.warning("agentevals: building run %s failed; error records written", deferred.run_id)
            error = RunBuildError(f"{type(err).__name__}: {err}")
            error.__cause__ = err
            stand_in = deferred.placeholder()
            for entry in entries:
                try:
                    failure = failure_record(
                        scorer_id=entry.scorer.id,
                        scorer_name=entry.scorer.name,
                        run=stand_in,
                        error=error,
                        source="live",
                    )
                    await self._deliver(failure, stand_in, submitted_at)
                finally:
                    self._pair_done()
            return None

    def _track(self, call: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(call)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _timeout_of(self, entry: ScorerEntry) -> float | None:
        return entry.timeout if entry.timeout is not None else self.scorer_timeout

    async def _score(self, run: Run, entry: ScorerEntry, submitted_at: float) -> None:
        try:
            limit = self._scorer_limits.get(id(entry))
            timeout = self._timeout_of(entry)
            if limit is None:
                record = await score_once(run, entry.scorer, timeout, self._concurrency)
            else:
                async with limit:
                    record = await score_once(run, entry.scorer, timeout, self._concurrency)
            await self._deliver(record, run, submitted_at)
        finally:
            self._pair_done()
            self._slots.release()

    def _score_inline(
        self, run: Run, entry: ScorerEntry, submitted_at: float
    ) -> Coroutine[Any, Any, None] | None:
        """A scorer with only sync steps: scored right here, no task, no semaphores. Returns what is
        left to await, if anything: a step that awaited after all, or a sink whose buffer is full."""
        outcome = score_inline(run, entry.scorer, self._timeout_of(entry))
        if isinstance(outcome, asyncio.Task):  # a step awaited after all: finish in the background
            return self._finish_later(outcome, run, submitted_at)
        record = self._accounted(outcome, run, submitted_at)
        full = [worker for worker in self._workers if not worker.offer(record)]
        if full:
            return self._put_then_done(full, record)
        self._pair_done()
        return None

    async def _finish_later(self, rest: asyncio.Task[ScoreRecord], run: Run, submitted_at: float) -> None:
        await self._slots.acquire()
        self._track(self._finish(rest, run, submitted_at))

    async def _put_then_done(self, workers: list[SinkWorker], record: ScoreRecord) -> None:
        try:
            for worker in workers:
                await worker.put(record)
        finally:
            self._pair_done()

    async def _finish(self, rest: asyncio.Task[ScoreRecord], run: Run, submitted_at: float) -> None:
        try:
            await self._deliver(await rest, run, submitted_at)
        finally:
            self._pair_done()
            self._slots.release()

    def _accounted(self, record: ScoreRecord, run: Run, submitted_at: float) -> ScoreRecord:
        """``record`` finalized (entity, redaction) and counted in the stats."""
        record = finalize(record, run.entity or self.entity, self.redact)
        latency = (time.perf_counter() - submitted_at) * 1000
        with self._lock:  # stats() copies the deque under the same lock
            self._latencies.append(latency)
            self._counts["failed" if isinstance(record, ScoreFailure) else "scored"] += 1
        return record

    async def _deliver(self, record: ScoreRecord, run: Run, submitted_at: float) -> None:
        record = self._accounted(record, run, submitted_at)
        for worker in self._workers:
            await worker.put(record)

    def _on_sink_error(self, error: BaseException) -> None:
        with self._lock:
            self._counts["sink_errors"] += 1
        logger.info("agentevals: a sink write failed (will retry): %s: %s", type(error).__name__, error)

    def _on_dead_letter(self, count: int, written: bool) -> None:
        with self._lock:
            self._counts["dead_lettered" if written else "lost"] += count

    def _is_idle(self) -> bool:
        return not self._queue and self._pending_pairs == 0 and all(w.idle for w in self._workers)

    def _pair_done(self) -> None:
        """One (run, scorer) pair is scored and its record handed to the sinks."""
        self._pending_pairs -= 1
        if not self._pending_pairs:
            self._check_settled()

    def _check_settled(self) -> None:
        """Wake a waiting flush as soon as nothing is left (no polling delay)."""
        if self._flushing and self._is_idle():
            self._settled.set()

    async def _flush_here(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        self._flushing += 1
        self._rush.set()
        for worker in self._workers:
            worker.hurry()
        try:
            while not self._is_idle():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
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

    async def _shutdown_here(self, timeout: float) -> bool:
        flushed = await self._flush_here(timeout)
        if not flushed:
            with self._lock:
                unscored = len(self._queue)
                self._queue.clear()
            logger.error(
                "agentevals: shutdown timed out after %s s; %d queued run(s) and %d scoring call(s) "
                "abandoned; buffered records go to the dead-letter file %s",
                timeout,
                unscored,
                self._pending_pairs,
                self.dead_letter.path,
            )
        for task in [*self._service, *self._tasks]:
            task.cancel()
        await asyncio.gather(*self._service, *self._tasks, return_exceptions=True)
        for worker in self._workers:
            leftover = worker.take_all()
            if leftover:
                await worker.spill(leftover, RuntimeError("engine shut down before the sink took these"))
            try:
                await worker.sink.close()
            except Exception as err:
                logger.warning(
                    "agentevals: closing sink %s failed: %s: %s", worker.name, type(err).__name__, err
                )
        self.dead_letter.close()
        return flushed

    # -- public control -----------------------------------------------------------------------------

    def _call(self, coro_fn: Callable[[float], Any], timeout: float) -> bool:
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
        return bool(future.result())

    async def _acall(self, coro_fn: Callable[[float], Any], timeout: float) -> bool:
        if asyncio.get_running_loop() is self._loop:
            return bool(await coro_fn(timeout))
        future = asyncio.run_coroutine_threadsafe(coro_fn(timeout), self._loop)
        return bool(await asyncio.wrap_future(future))

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until every accepted run is scored and written (or dead-lettered); ``False`` on timeout."""
        return self._call(self._flush_here, timeout)

    async def aflush(self, timeout: float = 30.0) -> bool:
        """Async :meth:`flush`, from any event loop."""
        return await self._acall(self._flush_here, timeout)

    def _close_intake(self) -> bool:
        with self._lock:
            was_closed, self._closed = self._closed, True
        if not was_closed:
            atexit.unregister(self._at_exit)
        return not was_closed

    def shutdown(self, timeout: float = 30.0) -> bool:
        """Stop accepting runs, flush, and close the sinks; ``True`` when everything was written."""
        if not self._close_intake():
            return True
        return self._call(self._shutdown_here, timeout)

    async def ashutdown(self, timeout: float = 30.0) -> bool:
        """Async :meth:`shutdown`, from any event loop."""
        if not self._close_intake():
            return True
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
            latencies = list(self._latencies)
        latencies.sort()
        counts.pop("refused")
        return EngineStats(
            **counts,
            queued=queued,
            latency_ms_p50=percentile(latencies, 0.50),
            latency_ms_p95=percentile(latencies, 0.95),
            latency_ms_p99=percentile(latencies, 0.99),
            sampled=sampled,
        )

    def __repr__(self) -> str:
        return f"ScoringEngine(scorers={self.scorer_ids}, sinks={[type(s).__name__ for s in self.sinks]})"
