"""The engine's intake: ``submit`` on the agent's thread (sampling per scorer, lazy runs, a bounded queue
with its overflow policy, every outcome counted) and, on the engine's loop, the wait that lets queued
runs gather before they are taken."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

from agentevals._engine._config import ScorerEntry
from agentevals._engine._drops import DropLedger
from agentevals._engine._options import QueueOptions
from agentevals._engine._run_keeper import RunKeeper
from agentevals._engine._sampling import sample_point
from agentevals._engine._stats import RuleCounters
from agentevals._model._deferred_run import DeferredRun
from agentevals._model._redact import Redactor, redact_text
from agentevals._model._run import Run
from agentevals._store._catalog_tables import DropCount

logger = logging.getLogger("agentevals.engine")

#: A queued run: the run (or its deferred build), the scorers that sampled it, when it was accepted.
Item = tuple[Run | DeferredRun, tuple[ScorerEntry, ...], float]

_OFFERED = ("submitted", "accepted", "sampled_out", "invalid", "dropped_overflow", "dropped_evicted",
            "dropped_shutdown")  # fmt: skip


class Intake:
    """Samples the runs offered and queues the accepted ones; :meth:`offer` never blocks.

    The counters are written by callers' threads under the lock. ``keeper`` (a sink stores unsampled
    runs) and ``drops`` (a sink stores drop counts) are ``None`` when no sink wants them, so the hot
    path of everyone else is one ``is None`` test.
    """

    def __init__(
        self,
        entries: Mapping[str, ScorerEntry],
        options: QueueOptions,
        loop: asyncio.AbstractEventLoop,
        *,
        entity: str | None,
        redact: Redactor | None,
        keeper: RunKeeper | None,
        drops: DropLedger | None,
    ) -> None:
        self.every = tuple(entries.values())
        self._keys = tuple(entries)
        self._ratio_needed = any(e.sampling.kind in ("ratio", "rules") for e in self.every)
        self._custom_needed = any(e.sampling.kind in ("custom", "rules") for e in self.every)
        self._rule_counters = RuleCounters(entries)
        self._rule_start = self._rule_counters.start
        self._index = {id(e): i for i, e in enumerate(self.every)}
        self._size = options.size
        self._overflow = options.overflow
        self._linger = options.linger
        self._entity = entity
        self._redact = redact
        self._keeper = keeper
        self._drops = drops
        self._lock = threading.Lock()
        self._queue: deque[Item] = deque()
        self._closed = False
        self._wake_pending = False
        self._rush_at = max(1, options.size // 2)
        self._counts = dict.fromkeys(_OFFERED, 0)
        self._sampled = [0] * len(self.every)
        self.abandoned = 0  # runs still queued when a shutdown stopped the engine
        self._hurrying = 0  # flushes waiting
        self._loop = loop
        self._wake = asyncio.Event()
        self._rush = asyncio.Event()  # take the runs now: the queue is half full, or a flush waits

    # -- the agent's thread -------------------------------------------------------------------------

    def offer(self, run: Any) -> bool:
        """Sample ``run`` and queue it for the scorers that chose it; ``True`` when accepted."""
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
        for entry in self.every:
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
            if len(self._queue) >= self._size:
                if self._overflow == "drop_newest":
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
            entries = self.every if len(chosen) == len(self.every) else tuple(chosen)
            self._queue.append((run, entries, time.perf_counter()))
            wake = not self._wake_pending
            self._wake_pending = True
            rush = len(self._queue) == self._rush_at
        if wake:
            self._loop.call_soon_threadsafe(self._wake.set)
        if rush:
            self._loop.call_soon_threadsafe(self._rush.set)
        return True

    def count_invalid(self) -> None:
        """Count a run that could not be offered (the engine failed to take it)."""
        with self._lock:
            self._counts["submitted"] += 1
            self._counts["invalid"] += 1

    def _entity_of(self, run: Run | DeferredRun) -> str | None:
        """The entity a dropped run is counted under (a deferred run's is not known: the engine's)."""
        return (run.entity if isinstance(run, Run) else None) or self._entity

    def _coerce(self, run: Any) -> Run | None:
        try:
            if isinstance(run, Mapping):
                return Run.model_validate(dict(run))
            raise TypeError(f"expected an agentevals.Run, got {type(run).__name__}")
        except Exception as err:
            self.count_invalid()
            logger.warning(
                "agentevals: submit() ignored an invalid run: %s", redact_text(self._redact, str(err))
            )
            return None

    # -- the engine's loop --------------------------------------------------------------------------

    async def gathered(self) -> None:
        """Return once runs were queued and had ``linger`` seconds to gather (less when the queue is
        half full or a flush waits)."""
        await self._wake.wait()
        if self._linger and not self._rush.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._linger):
                    await self._rush.wait()
        self._wake.clear()
        if not self._hurrying:
            self._rush.clear()
        # A plain store, no lock: a submit that still saw it True appended before this.
        self._wake_pending = False

    def take(self) -> Item | None:
        """The oldest queued run, or ``None`` when the queue is empty."""
        try:
            return self._queue.popleft()
        except IndexError:
            return None

    @property
    def queued(self) -> int:
        return len(self._queue)

    def hurry(self) -> None:
        """A flush waits: runs are taken without lingering until :meth:`relax`."""
        self._hurrying += 1
        self._rush.set()

    def relax(self) -> None:
        self._hurrying -= 1
        if not self._hurrying and len(self._queue) < self._rush_at:
            self._rush.clear()  # the hurry ends with the flush: later runs linger again

    def close(self) -> bool:
        """Accept no more runs; ``False`` if already closed. No lock: a SIGTERM handler may run this
        while its own thread holds the lock in :meth:`offer`."""
        if self._closed:
            return False
        self._closed = True
        return True

    def abandon_queued(self) -> None:
        """Count the runs still queued as abandoned (without the lock: a signal handler may hold it)."""
        while True:
            try:
                self._queue.popleft()
            except IndexError:
                return
            self.abandoned += 1

    def take_drops(self) -> list[DropCount]:
        """The drops counted since the last call, for the sinks that store them. The lock is waited for
        a moment only: a SIGTERM handler's shutdown may run while its own thread holds it in ``offer``."""
        if self._drops is None:
            return []
        locked = self._lock.acquire(timeout=0.5)
        try:
            return self._drops.take()
        finally:
            if locked:
                self._lock.release()

    # -- counters -----------------------------------------------------------------------------------

    @property
    def dropped(self) -> int:
        """Runs refused or evicted: the queue was full, or the engine shut down."""
        counts = self._counts
        return counts["dropped_overflow"] + counts["dropped_evicted"] + counts["dropped_shutdown"]

    def stats(self) -> dict[str, Any]:
        """The intake's fields of :class:`~agentevals.engine.EngineStats`, read under the lock."""
        with self._lock:
            return {
                **self._counts,
                "queued": len(self._queue),
                "sampled": dict(zip(self._keys, self._sampled, strict=True)),
                "sampled_by_rule": self._rule_counters.snapshot(),
            }
