"""The forwarder: a thread that takes accepted runs from the engine's queue and publishes them, in
batches, to a Dramatiq queue on RabbitMQ or Redis (the agent's thread never touches the broker). One
message carries up to ``max_runs`` runs and ``max_message_bytes`` of JSON (one publish, one broker
confirmation for all of them). A run larger than that goes alone, packed (compressed, see the codec), up
to ``max_packed_bytes``: below RabbitMQ 4's default ``max_message_size`` of 16 MiB (RabbitMQ 3: 128 MiB;
Redis: 512 MB).

With a spool, runs go to the spool first (that is when they are safe) and leave it once the broker
confirmed their publish. Without one, the forwarder holds at most one batch in memory and takes the
next only when that one is out, so while the broker is down runs wait in the engine's bounded queue
(its overflow counted as dropped). A broker outage is retried with backoff, and logged once. A message
the broker refuses for good (too large, say) is tried ``_REFUSALS`` times, then split in halves until
the refused run is alone; that run goes to the engine's dead-letter file, counted as dropped and
``refused`` (which makes the flush report falsy).
With a ``mask`` (the engine's ``redact=``), each run's texts are masked here before it is encoded.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agentevals._engine._forward._broker import enqueue
from agentevals._engine._forward._codec import PACK_OVER, batch_text, packed_text, run_entry_text
from agentevals._engine._forward._refusal import MessageTooLarge, dead_letter_run, refused_for_good
from agentevals._engine._forward._run_mask import masked_run
from agentevals._engine._forward._spool import Spool
from agentevals._model._deferred_run import DeferredRun
from agentevals._model._redact import Masker, redact_text
from agentevals._model._run import Run
from agentevals._store._store import display_address

logger = logging.getLogger("agentevals.engine")

#: What the engine hands over: a run (or its deferred build) and the keys of the scorers that sampled it.
Outgoing = tuple[Run | DeferredRun, Sequence[str]]


class RunSource(Protocol):
    """What the forwarder needs of the engine it forwards for (both called on the forwarder's thread)."""

    def take(self, limit: int) -> list[Outgoing]:
        """Up to ``limit`` accepted runs, oldest first, with the keys of the scorers that sampled each."""
        ...

    def progressed(self) -> None:
        """Runs were spooled or settled with the broker: a waiting flush may look again."""
        ...


_FIRST_RETRY = 0.25  # seconds before the first retry of an outage; doubled up to _LAST_RETRY
_LAST_RETRY = 15.0
_HEARTBEAT = 5.0  # seconds between spool heartbeats
_ADOPT_EVERY = 15.0  # seconds between looks for the spooled runs of engines that died
_INTAKE_ROUNDS = 8  # batches taken into the spool before the next publish
MAX_RUNS = 256  # runs in one message
MAX_MESSAGE_BYTES = PACK_OVER  # JSON text of one message (one larger run goes alone, packed)
MAX_PACKED_BYTES = 16_000_000  # a packed message: under RabbitMQ 4's default limit of 16 MiB
_REFUSALS = 3  # attempts of a message refused for good before it is split
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
    """An encoded run ready to publish (from memory, or from the spool with its row): its entry's JSON
    text (see the codec) and the queue it goes to."""

    queue: str
    text: str
    seq: int | None = None


class Forwarder:
    """Publishes the runs ``source`` hands over through ``broker`` (see the module docstring).

    Counters (written only by the forwarder's thread): ``published`` (confirmed by the broker),
    ``spooled`` (written to the spool), ``recovered`` (found in the spool, left by an engine that
    died), ``dropped`` (spool full, the run could not be built, or the broker refused it for good),
    ``refused`` (of those, the runs the broker refused, in the dead-letter file); ``waiting`` is what it
    holds now.
    """

    def __init__(
        self,
        url: str,
        broker: Any,
        *,
        queue: str,
        source: RunSource,
        entity: str | None,
        spool: Spool | None,
        batch_size: int,
        dead_letter: Path,
        mask: Masker | None = None,
    ) -> None:
        self.url = url
        self.queue = queue
        self.broker = broker  # from _broker.make_broker(url); used only on the forwarder's thread
        self._source = source
        self._entity = entity
        self._spool = spool
        self._batch_size = batch_size
        self._dead_letter = dead_letter
        self._mask = mask
        self.max_runs = MAX_RUNS
        self.max_message_bytes = MAX_MESSAGE_BYTES
        self.max_packed_bytes = MAX_PACKED_BYTES
        self._refusals = 0  # failed attempts of the first message, refused for good
        self._split: int | None = None  # while isolating a refused run: the runs per message
        self.published = self.spooled = self.recovered = self.dropped = self.refused = 0
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

    def start(self) -> None:
        """Start publishing, on the forwarder's own thread."""
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

    @property
    def parked(self) -> bool:
        """The broker is unreachable and everything taken over is in the spool: a shutdown need not
        wait (the next start on the spool publishes it)."""
        return (
            self._spool is not None
            and self._outage_since is not None
            and not self._taking
            and not self._in_hand
        )

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
        """A shutdown ran out of time (or left early, the broker unreachable) with ``queued`` runs still
        in the engine's queue: say what is left, and where it goes."""
        if self.parked and not queued:
            assert self._spool is not None
            logger.warning(
                "agentevals: shutting down with broker %s unreachable; %d run(s) not published stay in "
                "spool %r for the next start",
                display_address(self.url),
                self.waiting,
                str(self._spool.path),
            )
            return
        if self._spool is not None:
            where = f"{self.waiting} stay in spool {str(self._spool.path)!r} for the next start"
            if queued:
                where += f", {queued} not spooled yet are abandoned"
        else:
            where = "they are abandoned (no BrokerOptions.spool)"
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
                    self._held = self._encode(self._take_some(min(self._batch_size, self.max_runs)))
                finally:
                    self._in_hand = 0
                    self._taking = False
            ready = self._held
        if not ready or time.monotonic() < self._retry_at:
            return False
        published, settled = self._publish(ready)
        everything = settled == len(ready)  # before the memory batch (``ready`` itself) is trimmed
        if self._spool is not None:
            self._spool.remove([r.seq for r in ready[:settled] if r.seq is not None])
        else:
            del self._held[:settled]
        self.published += published
        if settled:
            self._source.progressed()
        return everything

    def _take_some(self, limit: int) -> list[Outgoing]:
        self._taking = True  # before the take: a flush must not see the runs in neither place
        items = self._source.take(limit)
        self._in_hand = len(items)
        return items

    def _intake_to_spool(self) -> bool:
        assert self._spool is not None
        items = self._take_some(self._batch_size)
        try:
            if not items:
                return False
            rows = [(uuid.uuid4().hex, r.queue, r.text) for r in self._encode(items)]
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
            self._source.progressed()
            return True
        finally:
            self._in_hand = 0
            self._taking = False

    def _from_spool(self) -> list[_Ready]:
        assert self._spool is not None
        if not self._spool.pending or time.monotonic() < self._retry_at:
            return []
        return [_Ready(row.queue, row.payload, row.seq) for row in self._spool.oldest(self.max_runs)]

    def _encode(self, items: list[Outgoing]) -> list[_Ready]:
        ready: list[_Ready] = []
        for run, keys in items:
            try:
                built = run.materialize() if isinstance(run, DeferredRun) else run
                if self._mask is not None:
                    built = masked_run(self._mask, built)
                text = run_entry_text(built, keys, entity=self._entity)
            except Exception as err:
                why = redact_text(self._mask, f"{type(err).__name__}: {err}")
                self._count_dropped(1, f"run {run.run_id!r} could not be built ({why})")
                continue
            ready.append(_Ready(self.queue, text))
        return ready

    def _count_dropped(self, count: int, why: str, *, once: bool = False) -> None:
        """Count runs not sent; log why (``once``: only the first time until the spool has room)."""
        self.dropped += count
        if once:
            if self._full_warned:
                return
            self._full_warned = True
        logger.warning("agentevals: %d run(s) not sent to the broker: %s (counted in dropped)", count, why)

    def _publish(self, ready: list[_Ready]) -> tuple[int, int]:
        """Publish ``ready`` in order, in messages of several runs. Returns the runs the broker confirmed
        and the leading runs settled (confirmed, or dead-lettered) before an outage (if any)."""
        published = settled = 0
        while settled < len(ready):
            batch = self._next_batch(ready, settled)
            try:
                self._send(batch)
            except Exception as err:
                if not refused_for_good(err):
                    self._outage(err, len(ready) - settled)
                    return published, settled
                if not self._isolate(batch, err):
                    return published, settled
                settled += 1 if len(batch) == 1 else 0  # dead-lettered; else split, sent again now
                continue
            published += len(batch)
            settled += len(batch)
            self._refusals = 0
        self._split = None
        if self._outage_since is not None:
            logger.warning(
                "agentevals: broker %s is reachable again after %.1f s; publishing the waiting runs",
                display_address(self.url),
                time.monotonic() - self._outage_since,
            )
            self._outage_since = None
        self._delay, self._retry_at = _FIRST_RETRY, 0.0
        return published, settled

    def _next_batch(self, ready: list[_Ready], start: int) -> list[_Ready]:
        """The runs of the next message: at least one, then as many as fit its bounds (same queue)."""
        limit = self._split or self.max_runs
        size, end = len(ready[start].text), start + 1
        while end < len(ready) and end - start < limit and ready[end].queue == ready[start].queue:
            size += len(ready[end].text) + 1
            if size + 32 > self.max_message_bytes:
                break
            end += 1
        return ready[start:end]

    def _send(self, batch: list[_Ready]) -> None:
        text = batch_text([r.text for r in batch])
        if len(text) > self.max_message_bytes:  # only a lone run can be: _next_batch keeps to the bound
            text = packed_text(text)
            if len(text) > self.max_packed_bytes:
                raise MessageTooLarge(
                    f"its message is {len(text):,} bytes compressed, over the forwarder's limit of "
                    f"{self.max_packed_bytes:,} bytes"
                )
        enqueue(self.broker, batch[0].queue, text)

    def _isolate(self, batch: list[_Ready], err: Exception) -> bool:
        """The broker refused ``batch`` for good: ``False`` to try it again later (the first
        ``_REFUSALS`` times, with backoff: a refusal may still pass); then ``True`` once it was split
        (the next message holds half its runs) or, a lone run, written to the dead-letter file."""
        self._refusals += 1
        if self._split is None and self._refusals < _REFUSALS and not isinstance(err, MessageTooLarge):
            self._retry_at = time.monotonic() + self._delay
            self._delay = min(_LAST_RETRY, self._delay * 2)
            logger.debug("agentevals: broker %s refused a message (%s); retrying", self.url, err)
            return False
        if len(batch) > 1:
            self._split = len(batch) // 2
            return True
        reason = f"{type(err).__name__}: {err}"
        dead_letter_run(
            self._dead_letter,
            broker=display_address(self.url),
            queue=batch[0].queue,
            entry_text=batch[0].text,
            reason=reason,
        )
        self._refusals, self._split = 0, None
        self.refused += 1
        self._count_dropped(
            1,
            f"the broker refuses it for good ({reason}); written to dead-letter file "
            f"{str(self._dead_letter.resolve())!r}",
        )
        return True

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
