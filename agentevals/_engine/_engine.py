"""``ScoringEngine``: score finished runs in the background, off the agent's hot path."""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from agentevals._engine._checks import check_scorers, check_sinks, default_sink
from agentevals._engine._config import ScorerEntry, check_options, normalize_scorers
from agentevals._engine._deferred import DeferredRun
from agentevals._engine._dispatch import EngineDispatch
from agentevals._engine._drops import DropLedger
from agentevals._engine._run_keeper import RunKeeper
from agentevals._engine._sampling import sample_point
from agentevals._engine._signals import install_sigterm_flush
from agentevals._engine._sink_worker import SinkWorker
from agentevals._engine._stats import RuleCounters
from agentevals._model._redact import redact_text
from agentevals._model._run import Run
from agentevals._scoring._limits._breaker import DEFAULT_BREAKER, Breaker
from agentevals._scoring._limits._budget import Budget
from agentevals._scoring._limits._gate import build_gate
from agentevals._scoring._score_once import FailureLog, Redactor
from agentevals._support._sync import background_loop
from agentevals.sinks._protocol import Sink, as_sink, sink_name
from agentevals.sinks._retry import DEFAULT_DEAD_LETTER, DeadLetter, RetryPolicy

logger = logging.getLogger("agentevals.engine")

Overflow = Literal["drop_newest", "drop_oldest"]
_Item = tuple[Run | DeferredRun, tuple[ScorerEntry, ...], float]


class ScoringEngine(EngineDispatch):
    """Scores finished runs in the background and sends every result (or error record) to the sinks.

    ``submit(run)`` decides sampling per scorer, appends to a bounded queue and returns in microseconds;
    it never blocks and never raises. Scoring runs on agentevals' own event loop on a daemon thread (the
    same loop in sync apps, async apps and Jupyter; a caller's loop may close before scoring ends).

    - ``scorers``: ``{"relevancy": {"scorer": s, "sampling": {"type": "ratio", "rate": 0.25}}}``, a list
      of scorers, :class:`ScorerEntry` objects, or one scorer. Ratio sampling is deterministic by
      ``trace_id or run_id``; rule sampling (``{"type": "rules", "rules": [...]}``, see
      :meth:`Sampling.rules <agentevals.Sampling.rules>`) gives each run the rate of the first rule it
      matches, on the same point.
    - ``sinks``: :class:`~agentevals.sinks.Sink` objects or plain callables taking one record. Without
      them results only go to the ``agentevals.results`` logger (a ``LoggingSink``, printed to stderr
      while logging is not configured), with a warning: use ``[SQLiteSink("agentevals.db")]`` to keep them.
    - ``queue_size`` / ``overflow``: at most ``queue_size`` runs wait; when full, ``"drop_newest"`` (the
      default) refuses the new run, ``"drop_oldest"`` evicts the oldest. Every drop is counted.
    - ``max_concurrency``: scorer calls at once (each :class:`ScorerEntry` may set its own lower limit);
      ``scorer_timeout``: seconds before a scorer call becomes a ``TimeoutError`` record. Scorers whose
      steps are all sync run on a worker thread of the engine, in chunks: a call that overruns gets its
      ``TimeoutError`` record, its thread is abandoned (a sync step cannot be interrupted) and the
      engine goes on. A sync step of a scorer that also has async steps runs on the engine's loop and
      cannot be cut off, so make slow steps ``async``; should one never return, ``flush``/``shutdown``
      (and the exit) still return ``_CALL_GRACE`` seconds past their timeout, counting what waits as
      abandoned.
    - ``redact``: ``(record) -> record`` applied before any sink, e.g. to mask emails (below).
    - ``entity``: the agent or chain name for records whose run has none.
    - ``linger``: seconds the engine lets runs gather before scoring them as one batch (less switching
      with the agent's thread, warm caches), cut short when the queue is half full or a flush waits.
    - Sink writes are batched (``batch_size`` records or ``linger`` seconds), retried per ``retry``
      and finally appended to ``dead_letter`` (JSONL; re-send with :func:`agentevals.sinks.replay`).
      A record holding values no store can take (circular or very deep containers, non-UTF-8 bytes,
      lone surrogates, objects whose ``repr`` raises) is stored with them replaced and their paths in
      its ``sanitized`` field; a record a sink still rejects is isolated from its batch.
    - ``exit_timeout``: seconds the flush at interpreter exit, or on SIGTERM, may take.
    - ``check``: at construction, verify each scorer's judges (:meth:`Scorer.check <agentevals.Scorer.check>`,
      no model call) and each sink that has a ``check()``; a problem is a ``ValueError`` naming the
      scorer or sink. ``check=False`` skips it (e.g. when API keys are set after the engine is made).
    - ``budgets``: limits on judge spend per minute, hour or day, for the engine or one scorer, e.g.
      ``[Budget(usd=5.0, per="day"), Budget(calls=1000, per="hour", scorer="relevancy")]`` (a scorer
      entry may carry its own: ``{"scorer": s, "budget": {"calls": 50, "per": "hour"}}``). Once one is
      spent, the runs of the scorers it covers get ``skipped`` records (``skip_reason="budget"``) until
      it resets; code scorers are never affected. See :class:`~agentevals.engine.Budget`.
    - ``breaker``: a circuit breaker per judge model (default ``Breaker()``: open after 5 consecutive
      transient failures or half of at least 20 calls in 60 s failing, for 30 s, then one probe call);
      while open, runs that need the model are ``skipped`` (``skip_reason="judge_unavailable"``) or wait
      (``on_open="wait"``). ``None`` turns it off. See :class:`~agentevals.engine.Breaker`; both show in
      ``stats().budgets`` and ``stats().breakers``.
    - ``handle_sigterm``: on SIGTERM (how containers stop a service), flush within ``exit_timeout``,
      then run the handler the application had installed, or, if none, end the process as SIGTERM
      does. Installed only when the engine is made on the main thread; ``False`` leaves SIGTERM alone.
    - ``broker``: score on workers (``agentevals worker``) instead of here: accepted runs go to a
      forwarder thread that publishes them to RabbitMQ (``"amqp://guest:guest@127.0.0.1:5672/"``) or
      Redis (``"redis://127.0.0.1:6379/0"``) on the ``broker_queue`` queue; the workers' sinks store the
      records, so ``sinks=`` go to them, and the judges are checked there. ``redact=`` must then be a
      :func:`~agentevals.redaction.mask`: it masks every text of each run (messages, tool arguments
      and results, input, output, context, error, metadata) on the forwarder's thread, before the run
      is spooled or published. The broker may
      be down: runs wait (reconnects with backoff), in memory up to ``queue_size`` or, with
      ``spool="agentevals-spool.db"``, in a SQLite file of at most ``spool_size`` runs that they leave
      only once the broker confirmed them (a restarted process on the same spool sends what a killed
      one left). ``stats()`` counts ``published``, ``spooled``, ``recovered``, ``dropped_unsent`` and
      ``forwarding`` (waiting); ``flush()`` waits for the publish. Needs ``agentevals-core[workers]``.
      The agent then has no store: its dropped runs are counted in ``stats()`` only.
    - Stored with the records: a scorer entry's ``threshold`` (``{"scorer": s, "threshold": 0.7}``, or
      ``{"min": .., "max": ..}``) and every scorer's name and version go to the sinks that keep them (the
      SQL sinks' ``agentevals_scorers`` table) when the engine starts; the runs it drops (queue full,
      evicted, offered after shutdown) are counted per hour, entity and sampled scorer and written to
      their ``agentevals_drops`` table after each scoring round, at every flush and at shutdown, so
      ``agentevals report`` and ``agentevals view`` can show pass rates and coverage.

    ``shutdown()`` runs at interpreter exit, so a normal exit loses nothing that was accepted.

    Accounting, the engine's promise: every accepted run ends as records (scored or failed) or is
    counted as dropped (evicted from a full queue) or abandoned (a shutdown ran out of time); every
    record ends, in each sink, written, dead-lettered or counted as lost. :meth:`stats` shows each
    count and :meth:`EngineStats.unbalanced` checks the sums; :meth:`flush` and :meth:`shutdown` return
    a :class:`FlushReport`, truthy only when the engine settled in time and nothing since the previous
    report was dead-lettered, lost or abandoned. ``submit`` returning ``True`` means the run was
    accepted at that moment; with ``overflow="drop_oldest"`` it may still be evicted later (counted
    in ``dropped_evicted``).

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
    >>> report = engine.shutdown()
    >>> bool(report), report.scored, report.written
    (True, 1, 1)
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
        handle_sigterm: bool = True,
        check: bool = True,
        broker: str | None = None,
        spool: str | os.PathLike[str] | None = None,
        spool_size: int = 100_000,
        broker_queue: str = "agentevals",
        budgets: Sequence[Budget | Mapping[str, Any]] = (),
        breaker: Breaker | Mapping[str, Any] | None = DEFAULT_BREAKER,
    ) -> None:
        self._entries = normalize_scorers(scorers)
        entry_budgets = {key: e.budget for key, e in self._entries.items() if e.budget is not None}
        self._gate = build_gate(list(self._entries), entry_budgets, budgets, breaker)
        if check and broker is None:  # with a broker, the workers run (and check) the judges
            check_scorers(self._entries)
        check_options(
            queue_size=queue_size,
            max_concurrency=max_concurrency,
            batch_size=batch_size,
            sink_buffer=sink_buffer,
            overflow=overflow,
            scorer_timeout=scorer_timeout,
            linger=linger,
            redact=redact,
            exit_timeout=exit_timeout,
            retry=retry,
        )
        remote = None
        if broker is not None or spool is not None:
            from agentevals._engine._forward._attach import check_remote_options

            remote = check_remote_options(
                broker, spool=spool, spool_size=spool_size, queue=broker_queue, sinks=sinks, redact=redact
            )
        self.queue_size = queue_size
        self.overflow: Overflow = overflow
        self.max_concurrency = max_concurrency
        self.scorer_timeout = scorer_timeout
        self.redact = redact
        self.entity = entity
        self.exit_timeout = exit_timeout
        self.linger = linger
        default = sinks is None and remote is None  # with a broker, the workers store the records
        self.sinks: list[Sink] = [default_sink()] if default else [as_sink(s) for s in sinks or ()]
        if check:
            check_sinks(self.sinks)
        self.dead_letter = DeadLetter(dead_letter)
        self._all = tuple(self._entries.values())
        self._ratio_needed = any(e.sampling.kind in ("ratio", "rules") for e in self._all)
        self._custom_needed = any(e.sampling.kind in ("custom", "rules") for e in self._all)
        self._rule_counters = RuleCounters(self._entries)
        self._rule_start = self._rule_counters.start
        self._index = {id(e): i for i, e in enumerate(self._all)}
        self._inline = {id(e) for e in self._all if e.scorer.is_sync}

        # Counters written by callers' threads, under the lock (submit).
        self._lock = threading.Lock()
        self._queue = deque()
        self._closed = False
        self._wake_pending = False
        self._rush_at = max(1, queue_size // 2)
        self._counts = dict.fromkeys(
            ("submitted", "accepted", "sampled_out", "invalid", "dropped_overflow", "dropped_evicted",
             "dropped_shutdown"),
            0,
        )  # fmt: skip
        self._sampled = [0] * len(self._all)
        # Counters written only on the engine's loop: no lock (stats() copies them whole).
        self._done = dict.fromkeys(
            ("scored", "failed", "skipped", "finished", "abandoned", "sink_errors", "dead_lettered", "lost"),
            0,
        )
        self._skipped_by = dict.fromkeys(self._entries, 0)
        self._latencies = deque(maxlen=10_000)
        self._failures = FailureLog(redact)  # scorer failures in the log too (throttled)
        self._worker = None  # the thread scoring sync scorers, made on first use
        self._pending_pairs = 0
        self._scoring = 0  # runs taken from the queue, not finished or abandoned yet
        self._flushing = 0
        self._stopping = False  # the shutdown is cancelling the engine's tasks
        self._shutdown_task = None
        self._reported = {}
        self._gave_up = False  # a shutdown stopped waiting for a loop held by a sync step
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
        names = [sink_name(sink) for sink in self.sinks]
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
                name=name if names.count(name) == 1 else f"{name}#{names[:i].count(name) + 1}",
            )
            for i, (sink, name) in enumerate(zip(self.sinks, names, strict=True))
        ]
        # Sinks made with store_runs="all" also store the runs no scorer sampled.
        # Counts of dropped runs, for the sinks that store them (counted on the drop paths only).
        self._drops = DropLedger() if any(w.stores_drops for w in self._workers) else None
        self._keeper = RunKeeper.create(
            self.sinks, self._loop, entity=entity, redact=redact, batch_size=batch_size, linger=linger,
            max_buffer=sink_buffer,
        )  # fmt: skip
        self._tasks = set()
        self._service = []
        self._forwarder = None
        start = self._start
        if remote is not None:  # runs go to the broker instead of the scoring dispatch
            from agentevals._engine._forward._attach import start_forwarder

            self._forwarder, start = start_forwarder(self, remote, batch_size=batch_size)
        self._loop.call_soon_threadsafe(start)
        atexit.register(self._at_exit)
        self._sigterm = install_sigterm_flush(self) if handle_sigterm else None

    @property
    def scorer_ids(self) -> list[str]:
        """The ids of the attached scorers (the ids their records carry)."""
        return list(self._entries)

    # -- hot path ---------------------------------------------------------------------------------

    def submit(self, run: Run) -> bool:
        """Offer a finished run; ``True`` when accepted (queued for at least one scorer).

        ``False`` when every scorer sampled it out, the queue was full (``drop_newest``), the input was
        not a run (logged), or the engine is shut down; each is counted. ``True`` means accepted at
        that moment: with ``overflow="drop_oldest"`` a later run may still evict it (counted in
        ``stats().dropped_evicted``). Never blocks, never raises.
        """
        try:
            return self._submit(run)
        except Exception:  # the agent must never see our failure
            logger.exception("agentevals: submit failed unexpectedly; run not scored")
            with self._lock:
                self._counts["submitted"] += 1
                self._counts["invalid"] += 1
            return False

    def submit_lazy(self, build: Callable[[], Run], *, run_id: str, trace_id: str | None = None) -> bool:
        """Offer a run by its ids; ``build()`` makes the :class:`Run` later, on the engine's thread, and
        only if a scorer samples it. Integrations use it to keep the agent's thread to bookkeeping.

        ``build`` must not depend on objects the caller changes afterwards (copy mutable lists first).
        With a custom sampler or sampling rules attached, the run is built here, since they need it. A failing
        ``build`` gives each sampled scorer an error record (``RunBuildError``); a scorer with a custom
        sampler counts as sampled then, so the failure is seen. Never raises.
        """
        try:
            return self._submit(DeferredRun(build, str(run_id), trace_id))
        except Exception:  # the agent must never see our failure
            logger.exception("agentevals: submit_lazy failed unexpectedly; run not scored")
            with self._lock:
                self._counts["submitted"] += 1
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
        hits: list[int] | None = [] if self._rule_start else None  # rule counters to add to
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
            elif sampling.ruleset is not None:
                if unbuilt:
                    chosen.append(entry)
                    continue
                assert isinstance(run, Run) and point is not None and hits is not None
                try:
                    verdict = sampling.ruleset.verdict(run, point)  # -1: no rule; odd: sampled
                except Exception:
                    logger.exception(
                        "agentevals: a sampling rule of scorer %s raised; run not sampled", entry.scorer.id
                    )
                    continue
                if verdict >= 0:
                    hits.append(self._rule_start[id(entry)] + verdict)
                    if verdict & 1:
                        chosen.append(entry)
        counts = self._counts
        with self._lock:
            counts["submitted"] += 1
            if self._closed:
                counts["dropped_shutdown"] += 1
                if self._drops is not None:
                    self._drops.count("shutdown", self._entity_of(run), tuple(e.scorer.id for e in chosen))
                return False
            if hits:
                for slot in hits:
                    self._rule_counters.counts[slot] += 1
            if not chosen:
                counts["sampled_out"] += 1
                if self._keeper is not None:
                    self._keeper.offer(run)
                return False
            if len(self._queue) >= self.queue_size:
                if self.overflow == "drop_newest":
                    counts["dropped_overflow"] += 1
                    if self._drops is not None:
                        self._drops.count(
                            "overflow", self._entity_of(run), tuple(e.scorer.id for e in chosen)
                        )
                    return False
                try:
                    evicted, evicted_for, _ = self._queue.popleft()
                    counts["dropped_evicted"] += 1
                    if self._drops is not None:
                        self._drops.count(
                            "evicted", self._entity_of(evicted), tuple(e.scorer.id for e in evicted_for)
                        )
                except IndexError:  # the engine took them all meanwhile
                    pass
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

    def _entity_of(self, run: Run | DeferredRun) -> str | None:
        """The entity a dropped run is counted under (a deferred run's is not known: the engine's)."""
        return (run.entity if isinstance(run, Run) else None) or self.entity

    def _coerce(self, run: Any) -> Run | None:
        try:
            if isinstance(run, Mapping):
                return Run.model_validate(dict(run))
            raise TypeError(f"expected an agentevals.Run, got {type(run).__name__}")
        except Exception as err:
            with self._lock:
                self._counts["submitted"] += 1
                self._counts["invalid"] += 1
            logger.warning(
                "agentevals: submit() ignored an invalid run: %s", redact_text(self.redact, str(err))
            )
            return None

    def __repr__(self) -> str:
        return f"ScoringEngine(scorers={self.scorer_ids}, sinks={[type(s).__name__ for s in self.sinks]})"
