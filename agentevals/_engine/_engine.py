"""``ScoringEngine``: score finished runs in the background, off the agent's hot path.

The engine is a facade over parts that own their state: the intake (sampling, the queue, lazy runs), a
stage that takes the accepted runs (the scoring dispatch or, with ``broker=``, the forwarding), the
delivery to the sinks, and the lifecycle (flush, shutdown, exit, SIGTERM), which reads their counters
through the accounts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentevals._engine._accounts import Accounts
from agentevals._engine._checks import check_scorers, check_sinks, default_sink
from agentevals._engine._config import normalize_scorers
from agentevals._engine._delivery import Delivery
from agentevals._engine._dispatch import Dispatch
from agentevals._engine._drops import DropLedger
from agentevals._engine._forward._options import BrokerOptions
from agentevals._engine._intake import Intake
from agentevals._engine._lifecycle import Lifecycle
from agentevals._engine._options import (
    DeliveryOptions,
    ExitOptions,
    QueueOptions,
    ScoringOptions,
    broker_of,
    options_of,
)
from agentevals._engine._stage import Stage
from agentevals._engine._stats import EngineStats, FlushReport
from agentevals._model._deferred_run import DeferredRun
from agentevals._model._redact import Masker
from agentevals._model._run import Run
from agentevals._scoring._limits._breaker import DEFAULT_BREAKER, Breaker
from agentevals._scoring._limits._budget import Budget
from agentevals._scoring._limits._gate import build_gate
from agentevals._scoring._score_once import Redactor
from agentevals._support._sync import background_loop
from agentevals.sinks._protocol import Sink, as_sink

logger = logging.getLogger("agentevals.engine")


class ScoringEngine:
    """Scores finished runs in the background and sends every result (or error record) to the sinks.

    :meth:`submit` samples the run per scorer, queues it and returns in microseconds; it never blocks
    and never raises. Scoring runs on agentevals' own event loop, on a daemon thread; :meth:`shutdown`
    runs at interpreter exit (and on SIGTERM), so a normal exit loses nothing that was accepted. Every
    accepted run ends as records or is counted as dropped or abandoned (:meth:`stats`). The options
    (:class:`~agentevals.engine.QueueOptions`, :class:`~agentevals.engine.ScoringOptions`,
    :class:`~agentevals.engine.DeliveryOptions`, :class:`~agentevals.engine.ExitOptions`,
    :class:`~agentevals.engine.BrokerOptions`) stay readable on the engine (``engine.queue.size``); they
    and the rest of the manual are on the *scoring engine* page.

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
        redact: Redactor | None = None,
        entity: str | None = None,
        check: bool = True,
        # Frozen dataclasses: one default instance is safe to share.
        queue: QueueOptions = QueueOptions(),  # noqa: B008
        scoring: ScoringOptions = ScoringOptions(),  # noqa: B008
        delivery: DeliveryOptions = DeliveryOptions(),  # noqa: B008
        exit: ExitOptions = ExitOptions(),  # noqa: B008
        broker: str | BrokerOptions | None = None,
        budgets: Sequence[Budget | Mapping[str, Any]] = (),
        breaker: Breaker | Mapping[str, Any] | None = DEFAULT_BREAKER,
    ) -> None:
        self.queue = options_of(queue, QueueOptions, "queue", "size=10_000")
        self.scoring = options_of(scoring, ScoringOptions, "scoring", "max_concurrency=16")
        self.delivery = options_of(delivery, DeliveryOptions, "delivery", "batch_size=256")
        self.exit = options_of(exit, ExitOptions, "exit", "timeout=30.0")
        self.broker = broker_of(broker)
        if redact is not None and not callable(redact):
            raise TypeError("redact must be a callable (record) -> record")
        self.redact = redact
        self.entity = entity
        self._entries = normalize_scorers(scorers)
        entry_budgets = {key: e.budget for key, e in self._entries.items() if e.budget is not None}
        gate = build_gate(list(self._entries), entry_budgets, budgets, breaker)
        if check and self.broker is None:  # with a broker, the workers run (and check) the judges
            check_scorers(self._entries)
        client = None
        if self.broker is not None:
            from agentevals._engine._forward._attach import check_broker

            client = check_broker(self.broker, sinks=sinks, redact=redact)
        default = sinks is None and self.broker is None  # with a broker, the workers store the records
        self.sinks: list[Sink] = [default_sink()] if default else [as_sink(s) for s in sinks or ()]
        if check:
            check_sinks(self.sinks)

        loop = background_loop()
        self._delivery = Delivery(
            self.sinks, self.delivery, loop, entity=entity, redact=redact, on_written=self._progressed
        )
        drops = DropLedger() if self._delivery.stores_drops else None
        self._intake = Intake(
            self._entries,
            self.queue,
            loop,
            entity=entity,
            redact=redact,
            keeper=self._delivery.keeper,
            drops=drops,
        )
        self._stage: Stage
        if self.broker is None:
            self._stage = Dispatch(
                self._intake.every,
                self.scoring,
                loop,
                intake=self._intake,
                delivery=self._delivery,
                gate=gate,
                entity=entity,
                redact=redact,
                on_idle=self._progressed,
            )
        else:
            from agentevals._engine._forwarding import Forwarding

            self._stage = Forwarding(
                self.broker,
                client,
                self._entries,
                loop,
                intake=self._intake,
                entity=entity,
                batch_size=self.delivery.batch_size,
                dead_letter=self._delivery.dead_letter.path,
                mask=redact if isinstance(redact, Masker) else None,
                on_progress=self._progressed_elsewhere,
            )
        accounts = Accounts(self._intake, self._stage, self._delivery, gate)
        self._lifecycle = Lifecycle(
            loop,
            intake=self._intake,
            stage=self._stage,
            delivery=self._delivery,
            accounts=accounts,
            exit=self.exit,
        )
        loop.call_soon_threadsafe(self._start)

    def _start(self) -> None:
        self._stage.start()
        self._delivery.start(self._entries)

    def _progressed(self) -> None:
        self._lifecycle.check_settled()

    def _progressed_elsewhere(self) -> None:
        self._lifecycle.progressed_elsewhere()

    @property
    def scorer_ids(self) -> list[str]:
        """The ids of the attached scorers (the ids their records carry)."""
        return list(self._entries)

    # -- the agent's thread -------------------------------------------------------------------------

    def submit(self, run: Run) -> bool:
        """Offer a finished run; ``True`` when accepted (queued for at least one scorer).

        ``False`` when every scorer sampled it out, the queue was full (``drop_newest``), the input was
        not a run (logged), or the engine is shut down; each is counted. ``True`` means accepted at
        that moment: with ``QueueOptions(overflow="drop_oldest")`` a later run may still evict it
        (counted in ``stats().dropped_evicted``). Never blocks, never raises.
        """
        try:
            return self._intake.offer(run)
        except Exception:  # the agent must never see our failure
            logger.exception("agentevals: submit failed unexpectedly; run not scored")
            self._intake.count_invalid()
            return False

    def submit_lazy(self, build: Callable[[], Run], *, run_id: str, trace_id: str | None = None) -> bool:
        """Offer a run by its ids; ``build()`` makes the :class:`Run` later, on the engine's thread, and
        only if a scorer samples it. Integrations use it to keep the agent's thread to bookkeeping.

        ``build`` must not depend on objects the caller changes afterwards (copy mutable lists first).
        With a custom sampler or sampling rules attached, the run is built here, since they need it. A
        failing ``build`` gives each sampled scorer an error record (``RunBuildError``); a scorer with a
        custom sampler counts as sampled then, so the failure is seen. Never raises.
        """
        try:
            return self._intake.offer(DeferredRun(build, str(run_id), trace_id))
        except Exception:  # the agent must never see our failure
            logger.exception("agentevals: submit_lazy failed unexpectedly; run not scored")
            self._intake.count_invalid()
            return False

    # -- flush, shutdown, stats ---------------------------------------------------------------------

    def flush(self, timeout: float = 30.0) -> FlushReport:
        """Wait until every accepted run is scored and written (or dead-lettered), at most ``timeout``
        seconds. The :class:`FlushReport` is truthy when everything settled and nothing since the
        previous report was dead-lettered, lost or abandoned."""
        return self._lifecycle.flush(timeout)

    async def aflush(self, timeout: float = 30.0) -> FlushReport:
        """Async :meth:`flush`, from any event loop."""
        return await self._lifecycle.aflush(timeout)

    def shutdown(self, timeout: float = 30.0) -> FlushReport:
        """Stop accepting runs, flush for at most ``timeout`` seconds, and close the sinks. What is not
        done in time is abandoned (runs) or dead-lettered (records), and counted; the
        :class:`FlushReport` says so. A second call returns an empty report."""
        return self._lifecycle.shutdown(timeout)

    async def ashutdown(self, timeout: float = 30.0) -> FlushReport:
        """Async :meth:`shutdown`, from any event loop."""
        return await self._lifecycle.ashutdown(timeout)

    def stats(self) -> EngineStats:
        """A snapshot of the counters and latency percentiles (see :class:`EngineStats`)."""
        return self._lifecycle.stats()

    def __repr__(self) -> str:
        return f"ScoringEngine(scorers={self.scorer_ids}, sinks={[type(s).__name__ for s in self.sinks]})"
