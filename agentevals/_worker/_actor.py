"""The scoring worker: a Dramatiq actor that scores the runs agents publish and stores the records
before the message is acked (``agentevals worker``).

One worker process = one Dramatiq ``Worker``: its threads each run one message at a time on one shared
event loop (Dramatiq's ``AsyncIO`` middleware), so ``--threads`` is the number of messages (batches of
runs) scored at once.
A message is acked after the actor returns, and the actor returns after the records are stored; a
sink outage raises, so the broker redelivers the message with backoff (``max_retries`` times, then
Dramatiq's dead-letter queue). Records have deterministic ids and the SQL sinks ignore duplicates: a
redelivered message adds no row.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Sequence
from types import FrameType
from typing import Any

import dramatiq
from dramatiq.middleware import AsyncIO, Middleware

from agentevals._engine._config import ScorerEntry
from agentevals._engine._forward._codec import ACTOR, runs_from_message
from agentevals._scoring._judge._litellm import warm_up_in_background
from agentevals._worker._group_write import GroupWriter
from agentevals._worker._limits import load_redactor, worker_gate
from agentevals._worker._score_message import BadMessage, MessageScorer
from agentevals._worker._setup import CONFIG_ENV, WorkerConfig, load_scorers, make_broker, open_sinks

logger = logging.getLogger("agentevals.worker")


class WorkerApp:
    """A broker with the scoring actor declared on it, and what the actor uses (built in each worker
    process: the sinks' connections are the process's own)."""

    def __init__(
        self,
        config: WorkerConfig,
        entries: dict[str, ScorerEntry] | None = None,
        sinks: Sequence[Any] | None = None,
    ) -> None:
        self.config = config
        self.entries = entries if entries is not None else load_scorers(config.scorers)
        if any(entry.scorer.has_judge for entry in self.entries.values()):
            warm_up_in_background()  # LiteLLM imported while the worker connects and starts its threads
        self.writer = GroupWriter(sinks if sinks is not None else open_sinks(config.sinks))
        redact = load_redactor(config.redact)
        self.gate = worker_gate(config, self.entries, redact)  # budgets, breaker, judge caps
        self.scorer = MessageScorer(
            self.entries, self.writer, scorer_timeout=config.scorer_timeout, gate=self.gate, redact=redact
        )
        self.broker = make_broker(config.broker, heartbeat_timeout_ms=config.heartbeat_timeout_ms)
        self.lifecycle = _Lifecycle(self)
        # First in the list: Dramatiq runs the after_* hooks last to first, so the sinks close before
        # AsyncIO stops the loop, and Lifecycle sees what Retries decided (message.failed).
        self.broker.add_middleware(AsyncIO(), before=type(self.broker.middleware[0]))
        self.broker.add_middleware(self.lifecycle, after=AsyncIO)

        async def score(payload: Any) -> None:
            await self.scorer.handle(payload)

        self.actor: Any = dramatiq.actor(
            actor_name=ACTOR,
            queue_name=config.queue,
            broker=self.broker,
            max_retries=config.max_retries,
            min_backoff=config.min_backoff_ms,
            max_backoff=config.max_backoff_ms,
            throws=(BadMessage,),  # unreadable: dead-lettered at once, never retried
        )(score)

    def worker(self, threads: int = 8) -> Any:
        """An in-process Dramatiq ``Worker`` on this broker (start it, then ``stop()`` it)."""
        from dramatiq import Worker

        return Worker(self.broker, queues={self.config.queue}, worker_threads=threads)


def setup() -> None:
    """Build the worker of this process from ``$AGENTEVALS_WORKER_CONFIG`` and make its broker
    Dramatiq's global broker: what ``dramatiq agentevals._worker._actor:setup`` loads in each process."""
    import dramatiq

    text = os.environ.get(CONFIG_ENV)
    if not text:
        raise RuntimeError(f"{CONFIG_ENV} is not set: start workers with `agentevals worker ...`")
    app = WorkerApp(WorkerConfig.from_env(text))
    dramatiq.set_broker(app.broker)
    _hard_stop_on_second_signal()


def _hard_stop_on_second_signal() -> None:
    """Make a second SIGTERM end the worker process at once. Dramatiq's worker process answers it with
    ``sys.exit``, which then waits forever for the AsyncIO event-loop thread (not a daemon); a process
    that ends at once is no worse than ``kill -9``: its unacked messages go back to the queue."""
    first = signal.getsignal(signal.SIGTERM)
    if not callable(first):
        return
    seen = 0

    def on_term(signum: int, frame: FrameType | None) -> None:
        nonlocal seen
        seen += 1
        if seen > 1:
            logger.warning(
                "agentevals: second stop signal: exiting now; unfinished messages go back to the queue"
            )
            logging.shutdown()
            os._exit(1)
        first(signum, frame)

    signal.signal(signal.SIGTERM, on_term)


def run_workers(config: WorkerConfig, *, processes: int, threads: int) -> int:
    """Run ``processes`` worker processes of ``threads`` threads each with Dramatiq's own process
    manager (it forwards SIGTERM/SIGINT: each worker stops taking messages, finishes those under way
    and closes its sinks; messages not finished go back to the queue). Returns its exit code."""
    from dramatiq.cli import main, make_argument_parser

    os.environ[CONFIG_ENV] = config.to_env()
    args = make_argument_parser().parse_args(  # type: ignore[no-untyped-call]
        [f"{__name__}:setup", "--processes", str(processes), "--threads", str(threads)]
    )
    return int(main(args) or 0)  # type: ignore[no-untyped-call]


class _Lifecycle(Middleware):
    """Counts and logs what the broker gave up on, and closes the sinks when the worker stops."""

    def __init__(self, app: WorkerApp) -> None:
        self.app = app
        self.dead_lettered = 0

    def after_process_message(
        self, broker: Any, message: Any, *, result: Any = None, exception: BaseException | None = None
    ) -> None:
        if exception is not None and getattr(message, "failed", False):
            self.dead_lettered += 1
            logger.error(
                "agentevals: message %s (run %s) dead-lettered after %s retries: %s: %s (find it in "
                "the broker's dead-letter queue %s.XQ)",
                message.message_id,
                _run_id(message.args),
                message.options.get("retries", 0),
                type(exception).__name__,
                exception,
                message.queue_name,
            )

    def after_worker_shutdown(self, broker: Any, worker: Any) -> None:
        from dramatiq.asyncio import get_event_loop_thread

        loop_thread = get_event_loop_thread()
        if loop_thread is not None:
            loop_thread.run_coroutine(self.app.writer.close())
            loop_thread.run_coroutine(_cancel_leftover_tasks())
        counts = dict(self.app.scorer.counts)
        logger.info(
            "agentevals: worker stopped; %s, dead-lettered=%d; %s",
            counts,
            self.dead_lettered,
            self.app.gate.summary(),
        )


async def _cancel_leftover_tasks() -> None:
    """End the tasks libraries left on the loop (LiteLLM's logging worker) before AsyncIO stops it, so
    none is destroyed pending."""
    tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def _run_id(args: Sequence[Any]) -> str:
    """The run a message carries, or how many (for the log)."""
    try:
        runs = runs_from_message(args[0] if args else None)
    except ValueError:
        return "?"
    return runs[0].run.run_id if len(runs) == 1 else f"{runs[0].run.run_id} and {len(runs) - 1} more"
