"""The forwarder: a thread that takes accepted runs from the engine's queue and publishes them, in
batches, to a Dramatiq queue on RabbitMQ or Redis (the agent's thread never touches the broker).

With a spool, runs go to the spool first (that is when they are safe) and leave it once the broker
confirmed their publish. Without one, the forwarder holds at most one batch in memory and takes the
next only when that one is out, so while the broker is down runs wait in the engine's bounded queue
(its overflow counted as dropped). A broker outage is retried with backoff, and logged once.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from agentevals._engine._deferred import DeferredRun
from agentevals._remote._codec import ACTOR, run_message
from agentevals._remote._spool import Spool
from agentevals._run import Run
from agentevals._store import display_address

logger = logging.getLogger("agentevals.engine")

#: What the engine hands over: a run (or its deferred build) and the keys of the scorers that sampled it.
Outgoing = tuple[Run | DeferredRun, Sequence[str]]

_FIRST_RETRY = 0.25  # seconds before the first retry of an outage; doubled up to _LAST_RETRY
_LAST_RETRY = 15.0
_HEARTBEAT = 5.0  # seconds between spool heartbeats
_ADOPT_EVERY = 15.0  # seconds between looks for the spooled runs of engines that died
_INTAKE_ROUNDS = 8  # batches taken into the spool before the next publish
_NOISY_LOGGERS = (  # they log each failed connection attempt at ERROR: one warning per outage is ours
    "pika.adapters.utils.connection_workflow",
    "pika.adapters.utils.io_services_utils",
    "pika.adapters.blocking_connection",
    "pika.adapters.base_connection",
    "dramatiq.broker.RabbitmqBroker",
    "dramatiq.broker.RedisBroker",
)
_THREAD = "agentevals-forwarder"


@dataclass(frozen=True)
class _Ready:
    """An encoded message ready to publish (from memory, or from the spool with its row)."""

    message_id: str
    queue: str
    payload: dict[str, Any]
    seq: int | None = None


def make_broker(url: str) -> Any:
    """A Dramatiq broker for ``url`` (``amqp://`` or ``amqps://``: RabbitMQ with publisher confirms;
    ``redis://``, ``rediss://`` or ``unix://``: Redis). Nothing connects yet. A ``ValueError`` when the
    URL cannot be used or Dramatiq is not installed."""
    if not isinstance(url, str):
        raise ValueError(
            f"broker must be a URL text such as 'amqp://guest:guest@127.0.0.1:5672/', got {url!r}"
        )
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("amqp", "amqps", "redis", "rediss", "unix"):
        raise ValueError(
            f"broker {display_address(url)!r}: unknown scheme {scheme!r}; use "
            "amqp://user:password@host:5672/ (RabbitMQ, recommended) or redis://host:6379/0 (Redis)"
        )
    try:
        import dramatiq  # noqa: F401
    except ImportError as err:
        raise ValueError(
            'scoring on workers (broker=...) needs Dramatiq: pip install "agentevals-core[workers]"'
        ) from err
    try:
        if scheme.startswith("amqp"):
            from dramatiq.brokers.rabbitmq import RabbitmqBroker

            return RabbitmqBroker(url=_unblocking(url), confirm_delivery=True, middleware=[])
        import redis
        from dramatiq.brokers.redis import RedisBroker

        client = redis.Redis.from_url(url, socket_connect_timeout=5.0, socket_timeout=10.0)
        return RedisBroker(client=client, middleware=[])  # type: ignore[no-untyped-call]
    except (ValueError, TypeError, KeyError) as err:
        raise ValueError(f"broker URL {display_address(url)!r} cannot be read: {err}") from err


def _unblocking(url: str) -> str:
    """``url`` with ``blocked_connection_timeout=30`` unless it sets one: a RabbitMQ that blocks
    publishers (a memory or disk alarm) then fails the publish, retried later, instead of holding the
    forwarder's thread forever."""
    if ";" in url:  # several nodes, tried in turn
        return ";".join(_unblocking(part) for part in url.split(";"))
    if "blocked_connection_timeout=" in url:
        return url
    return f"{url}{'&' if urlsplit(url).query else '?'}blocked_connection_timeout=30"


class Forwarder:
    """Publishes the runs ``take(limit)`` hands over through ``broker`` (see the module docstring).

    Counters (written only by the forwarder's thread): ``published`` (confirmed by the broker),
    ``spooled`` (written to the spool), ``recovered`` (found in the spool, left by an engine that
    died), ``dropped`` (spool full, or the run could not be built); ``waiting`` is what it holds now.
    """

    def __init__(
        self,
        url: str,
        broker: Any,
        *,
        queue: str,
        take: Callable[[int], list[Outgoing]],
        entity: str | None,
        spool: Spool | None,
        batch_size: int,
        on_progress: Callable[[], None],
    ) -> None:
        self.url = url
        self.queue = queue
        self.broker = broker  # from make_broker(url); used only on the forwarder's thread
        self._take = take
        self._entity = entity
        self._spool = spool
        self._batch_size = batch_size
        self._on_progress = on_progress
        self.published = self.spooled = self.recovered = self.dropped = 0
        self._held: list[_Ready] = []  # memory mode: the batch being published
        self._in_hand = 0  # taken from the engine's queue, not yet held or spooled
        self._taking = False
        self._wake = threading.Event()
        self._stopping = False
        self._retry_at = 0.0  # monotonic time of the next publish attempt during an outage
        self._delay = _FIRST_RETRY
        self._outage_since: float | None = None
        self._full_warned = False
        self._thread = threading.Thread(target=self._main, name=_THREAD, daemon=True)
        _quiet_broker_logs()
        if spool is not None:
            self.adopt()
        self._thread.start()

    # -- called from other threads ------------------------------------------------------------------

    @property
    def waiting(self) -> int:
        """Runs taken over and not published yet (held in memory, or this engine's rows in the spool)."""
        spooled = self._spool.pending if self._spool is not None else 0
        return self._in_hand + len(self._held) + spooled

    @property
    def idle(self) -> bool:
        """Nothing taken over is waiting to be published."""
        return not self._taking and self.waiting == 0

    def wake(self) -> None:
        """Runs were queued: take them."""
        self._wake.set()

    def hurry(self) -> None:
        """A flush waits: retry the broker now rather than at the end of the backoff."""
        self._retry_at = 0.0
        self._wake.set()

    def close(self, timeout: float) -> int:
        """Stop within ``timeout`` seconds and close the broker's connections. Returns the runs held in
        memory that were not published, now abandoned (spooled ones stay in the spool for the next start;
        0 when the thread did not stop in time: what it holds still counts as waiting)."""
        self._stopping = True
        self._wake.set()
        self._thread.join(max(0.0, timeout))
        if self._thread.is_alive():  # a publish is stuck: leave it (a daemon thread); its runs still wait
            return 0
        try:
            self.broker.close()
        except Exception as err:
            logger.debug("agentevals: closing the broker connection failed: %s", err)
        if self._spool is not None:
            self._spool.close()
        abandoned = self._in_hand + len(self._held)
        self._held, self._in_hand = [], 0
        return abandoned

    def log_unpublished(self, timeout: float, *, queued: int) -> None:
        """A shutdown ran out of time with ``queued`` runs still in the engine's queue: say what is
        left, and where it goes."""
        if self._spool is not None:
            where = f"{self.waiting} stay in spool {str(self._spool.path)!r} for the next start"
            if queued:
                where += f", {queued} not spooled yet are abandoned"
        else:
            where = "they are abandoned (no spool=)"
        logger.warning(
            "agentevals: shutdown timed out after %s s with broker %s; %d run(s) not published: %s",
            timeout,
            display_address(self.url),
            self.waiting + queued,
            where,
        )

    # -- the forwarder's thread ---------------------------------------------------------------------

    def _main(self) -> None:
        last_beat, last_adopt = 0.0, time.monotonic()  # the engine adopted at start
        while not self._stopping:
            self._wake.clear()  # before the round: a wake-up during it makes the wait below return
            try:
                now = time.monotonic()
                if self._spool is not None and now - last_beat >= _HEARTBEAT:
                    last_beat = now
                    self._spool.heartbeat()
                if self._spool is not None and now - last_adopt >= _ADOPT_EVERY:
                    last_adopt = now
                    self.adopt()
                busy = self._cycle()
            except Exception:  # a bug of ours or a spool failure: log, wait, go on
                logger.exception("agentevals: the broker forwarder failed; it retries")
                busy = False
                self._wake.wait(1.0)
            if not busy:
                self._wake.wait(self._idle_wait())

    def _idle_wait(self) -> float:
        if self.waiting and self._retry_at:
            return max(0.01, min(self._retry_at - time.monotonic(), _HEARTBEAT))
        return _HEARTBEAT

    def _cycle(self) -> bool:
        """One round of intake and publishing; ``True`` when there is more to do right away."""
        if self._spool is not None:
            for _ in range(_INTAKE_ROUNDS):
                if not self._intake_to_spool():
                    break
            ready = self._from_spool()
        else:
            if not self._held and time.monotonic() >= self._retry_at:
                try:
                    self._held = self._encode(self._take_some())
                finally:
                    self._in_hand = 0
                    self._taking = False
            ready = self._held
        if not ready or time.monotonic() < self._retry_at:
            return False
        sent = self._publish(ready)
        everything = sent == len(ready)  # before the memory batch (``ready`` itself) is trimmed
        if self._spool is not None:
            self._spool.remove([r.seq for r in ready[:sent] if r.seq is not None])
        else:
            del self._held[:sent]
        self.published += sent
        if sent:
            self._on_progress()
        return everything

    def _take_some(self) -> list[Outgoing]:
        self._taking = True  # before the take: a flush must not see the runs in neither place
        items = self._take(self._batch_size)
        self._in_hand = len(items)
        return items

    def _intake_to_spool(self) -> bool:
        assert self._spool is not None
        items = self._take_some()
        try:
            if not items:
                return False
            ready = self._encode(items)
            rows = [
                (r.message_id, r.queue, json.dumps(r.payload)) for r in ready
            ]  # ASCII: lone surrogates too
            try:
                stored = self._spool.add(rows)
            except sqlite3.Error as err:  # e.g. the disk is full: say so, count them, go on
                self._count_dropped(len(rows), f"spool {str(self._spool.path)!r} cannot store them ({err})")
                return True
            self.spooled += stored
            if stored < len(rows):
                self._count_dropped(
                    len(rows) - stored, f"the spool is full ({self._spool.max_rows} runs)", once=True
                )
            else:
                self._full_warned = False
            self._on_progress()
            return True
        finally:
            self._in_hand = 0
            self._taking = False

    def _from_spool(self) -> list[_Ready]:
        assert self._spool is not None
        if not self._spool.pending or time.monotonic() < self._retry_at:
            return []
        return [
            _Ready(row.message_id, row.queue, json.loads(row.payload), row.seq)
            for row in self._spool.oldest(self._batch_size)
        ]

    def _encode(self, items: list[Outgoing]) -> list[_Ready]:
        ready: list[_Ready] = []
        for run, keys in items:
            try:
                built = run.materialize() if isinstance(run, DeferredRun) else run
                payload = run_message(built, keys, entity=self._entity)
            except Exception as err:
                self._count_dropped(1, f"run {run.run_id!r} could not be built ({type(err).__name__}: {err})")
                continue
            ready.append(_Ready(uuid.uuid4().hex, self.queue, payload))
        return ready

    def _count_dropped(self, count: int, why: str, *, once: bool = False) -> None:
        """Count runs not sent; log why (``once``: only the first time until the spool has room)."""
        self.dropped += count
        if once:
            if self._full_warned:
                return
            self._full_warned = True
        logger.warning("agentevals: %d run(s) not sent to the broker: %s (counted in dropped)", count, why)

    def _publish(self, ready: list[_Ready]) -> int:
        """Publish in order; returns how many the broker confirmed before a failure (if any)."""
        import dramatiq

        sent = 0
        try:
            for item in ready:
                message: dramatiq.Message[Any] = dramatiq.Message(
                    queue_name=item.queue,
                    actor_name=ACTOR,
                    args=(item.payload,),
                    kwargs={},
                    options={},
                    message_id=item.message_id,
                )
                self.broker.enqueue(message)
                sent += 1
        except Exception as err:
            self._outage(err, len(ready) - sent)
            return sent
        if self._outage_since is not None:
            logger.warning(
                "agentevals: broker %s is reachable again after %.1f s; publishing the waiting runs",
                display_address(self.url),
                time.monotonic() - self._outage_since,
            )
            self._outage_since = None
        self._delay, self._retry_at = _FIRST_RETRY, 0.0
        return sent

    def _outage(self, err: Exception, unsent: int) -> None:
        now = time.monotonic()
        if self._outage_since is None:
            self._outage_since = now
            where = "in the spool" if self._spool is not None else "in memory (the engine's queue)"
            logger.warning(
                "agentevals: cannot publish to broker %s (%s: %s); %d run(s) wait %s and are sent when "
                "it is reachable (retrying with backoff up to %.0f s)",
                display_address(self.url),
                type(err).__name__,
                err,
                self.waiting or unsent,
                where,
                _LAST_RETRY,
            )
        else:
            self._delay = min(_LAST_RETRY, self._delay * 2)
        self._retry_at = now + self._delay

    def adopt(self) -> None:
        """Take over the spooled runs of engines that died (at start, then now and then)."""
        assert self._spool is not None
        adopted = self._spool.adopt_orphans()
        if adopted:
            self.recovered += adopted
            logger.warning(
                "agentevals: %d run(s) left in spool %s by an engine that stopped: publishing them here",
                adopted,
                self._spool.path,
            )


def _quiet_broker_logs() -> None:
    """Drop the broker clients' per-attempt connection errors logged on the forwarder's thread."""
    for name in _NOISY_LOGGERS:
        target = logging.getLogger(name)
        if not any(isinstance(f, _ForwarderThreadFilter) for f in target.filters):
            target.addFilter(_ForwarderThreadFilter())


class _ForwarderThreadFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.threadName != _THREAD
