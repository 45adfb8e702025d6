"""``rescore`` / ``arescore``: run scorers over the runs a store already holds and store their records.

"How would last week's traffic have scored?": the runs (transcripts) are read back from
``agentevals_runs``, each (run, scorer version) not scored yet is scored, and the records go to the same
store with ``source="rescore"``.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from agentevals._engine._sampling import Sampling
from agentevals._evals._progress import ProgressBar
from agentevals._model._result import ScoreRecord
from agentevals._model._run import Run
from agentevals._scoring._score_stored import score_stored
from agentevals._scoring._scorer import Scorer
from agentevals._store._store import Store, open_store
from agentevals._support._sync import background_loop, run_soon

logger = logging.getLogger("agentevals.evals")

#: Records written per sink call: large batches keep the SQL sinks fast.
BATCH = 1000
#: Pairs a worker scores between two yields to the event loop.
YIELD_EVERY = 32
#: Runs handed over from the reading thread at a time.
CHUNK = 250
#: Batches being written while the scoring goes on.
WRITES_AHEAD = 2


@dataclass(frozen=True)
class RescoreSummary:
    """What a re-score did. ``runs``: stored runs read (after ``since``/``entity``/``limit``); the other
    counts are (run, scorer) pairs: ``scored``, ``failed`` (error records), ``skipped`` (skip records:
    a missing input, or a failed run), ``already_scored`` (left alone: the store had a record of that
    scorer version). ``sink_errors``: batches a sink failed to write. ``interrupted``: stopped early
    (Ctrl-C); the counts cover what was done and stored. ``sampled_out``: runs a ``sampling`` policy
    left out (not scored, in no other count but ``runs``).

    >>> RescoreSummary(runs=2, scored=2).total
    2
    """

    runs: int = 0
    scored: int = 0
    failed: int = 0
    skipped: int = 0
    already_scored: int = 0
    sink_errors: int = 0
    interrupted: bool = False
    sampled_out: int = 0

    @property
    def total(self) -> int:
        """The (run, scorer) pairs scored now, whatever their outcome."""
        return self.scored + self.failed + self.skipped


async def arescore(
    store: str | os.PathLike[str] | Store,
    scorers: Sequence[Scorer] | Scorer,
    *,
    since: datetime | timedelta | None = None,
    entity: str | None = None,
    limit: int | None = None,
    concurrency: int = 8,
    force: bool = False,
    progress: bool = True,
    sinks: Sequence[Any] | None = None,
    stop: asyncio.Event | None = None,
    sampling: Sampling | Any = None,
) -> RescoreSummary:
    """Score the runs stored at ``store`` (a SQLite path, a ``postgresql://`` URL or an opened
    :class:`~agentevals._store._store.Store`) with ``scorers`` and store the records (``source="rescore"``) in
    the same store, or in ``sinks`` when given (not closed; the store's own sink is).

    The runs are read newest first: ``since`` (a datetime, or a timedelta before now), ``entity`` and
    ``limit`` (the newest N) select them. A (run, scorer, version) the store already holds is skipped
    unless ``force``: then every run is scored again and each record **replaces** the stored row of the
    same (run, scorer, version) in the store (ids derive from them; ``ON CONFLICT (id) DO UPDATE``), e.g.
    after changing a scorer that keeps its version. A run that failed (``Run.error``) gets a skipped
    record (``run_failed``), as live scoring does. At most ``concurrency`` scorer calls run at once (a
    judge retries on its own).
    Setting ``stop`` ends early: records done are stored and the summary says ``interrupted=True``.
    ``sampling`` (a :class:`~agentevals.Sampling` or what :meth:`Sampling.of <agentevals.Sampling.of>`
    takes, e.g. ``Sampling.from_file("sampling.yaml")``) scores only the runs it samples, as live
    scoring would have: a policy tried on stored traffic.

    >>> import asyncio, tempfile, pathlib
    >>> from agentevals.sinks import SQLiteSink
    >>> from agentevals.scorers import create_exact_match_scorer
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.db"
    >>> SQLiteSink(path).check()
    >>> asyncio.run(arescore(path, [create_exact_match_scorer()], progress=False))  # doctest: +ELLIPSIS
    RescoreSummary(runs=0, scored=0, failed=0, skipped=0, already_scored=0, sink_errors=0, ...)
    """
    scorer_list = _check_scorers(scorers)
    policy = None if sampling is None else Sampling.of(sampling)
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}")
    moment = datetime.now(UTC) - since if isinstance(since, timedelta) else since
    opened = store if isinstance(store, Store) else await asyncio.to_thread(open_store, store)
    from agentevals.sinks._open import store_writer

    own_sink = None if sinks is not None else store_writer(opened, replace=force, bulk=True)
    try:
        total = await asyncio.to_thread(opened.count_runs, since=moment, entity=entity, limit=limit)
        done: list[set[str]] = [set() for _ in scorer_list]
        if not force:
            done = [await asyncio.to_thread(opened.scored, s.id, s.version) for s in scorer_list]
        targets = _as_sinks(sinks) if sinks is not None else [own_sink]
        reader = _Reader(opened.runs(since=moment, entity=entity, limit=limit))
        try:
            rescoring = _Rescore(scorer_list, targets, concurrency, progress, policy)
            return await rescoring.run(total, reader, done, stop)
        finally:
            await reader.close()
    finally:
        if own_sink is not None:
            await own_sink.close()
        if not isinstance(store, Store):
            opened.close()


def rescore(
    store: str | os.PathLike[str] | Store,
    scorers: Sequence[Scorer] | Scorer,
    *,
    since: datetime | timedelta | None = None,
    entity: str | None = None,
    limit: int | None = None,
    concurrency: int = 8,
    force: bool = False,
    progress: bool = True,
    sinks: Sequence[Any] | None = None,
    sampling: Sampling | Any = None,
) -> RescoreSummary:
    """Blocking :func:`arescore`; works in scripts and inside a running event loop (Jupyter).

    Ctrl-C (``KeyboardInterrupt``) stops it quietly: the records done are stored and the summary says
    ``interrupted=True``. A second Ctrl-C while it winds down is raised.

    >>> import tempfile, pathlib
    >>> from agentevals.sinks import SQLiteSink
    >>> from agentevals.scorers import create_exact_match_scorer
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.db"
    >>> SQLiteSink(path).check()
    >>> rescore(path, [create_exact_match_scorer()], since=timedelta(days=7), progress=False).runs
    0
    """
    loop = background_loop()
    stop = asyncio.Event()  # only touched on the loop's thread (set through call_soon_threadsafe)
    future = run_soon(
        arescore(
            store,
            scorers,
            since=since,
            entity=entity,
            limit=limit,
            concurrency=concurrency,
            force=force,
            progress=progress,
            sinks=sinks,
            stop=stop,
            sampling=sampling,
        )
    )
    try:
        return future.result()
    except KeyboardInterrupt:
        loop.call_soon_threadsafe(stop.set)
        return future.result()


class _Reader:
    """The stored runs, read ``CHUNK`` at a time on a worker thread, one chunk ahead of the scoring (the
    database's work overlaps it; a large store is never held in memory)."""

    def __init__(self, runs: Iterator[Run]) -> None:
        self._runs = runs
        self._next: asyncio.Future[list[Run]] | None = None

    def _read(self) -> list[Run]:
        return list(itertools.islice(self._runs, CHUNK))

    async def next(self) -> list[Run]:
        """The next chunk of runs; an empty list at the end."""
        pending = self._next or asyncio.ensure_future(asyncio.to_thread(self._read))
        chunk = await asyncio.shield(pending)  # a cancelled worker leaves the read to finish for close()
        self._next = asyncio.ensure_future(asyncio.to_thread(self._read)) if chunk else None
        return chunk

    async def close(self) -> None:
        """Wait for a read under way (the store's connection is closed after this)."""
        if self._next is not None:
            await asyncio.gather(self._next, return_exceptions=True)
        await asyncio.to_thread(getattr(self._runs, "close", lambda: None))


class _Rescore:
    """One re-score: workers take (run, scorer) pairs as the reader hands the runs over; records are
    written in batches behind the scoring (at most ``WRITES_AHEAD`` batches in flight)."""

    def __init__(
        self,
        scorers: list[Scorer],
        sinks: list[Any],
        concurrency: int,
        progress: bool,
        sampling: Sampling | None,
    ) -> None:
        self.scorers = scorers
        self.sampling = sampling
        self.sampled_out = 0
        self.sinks = sinks
        self.concurrency = concurrency
        self.progress = progress
        self.counts = {"scored": 0, "failed": 0, "skipped": 0}
        self.already = 0
        self.sink_errors = 0
        self.buffer: list[ScoreRecord] = []
        self.writes: list[asyncio.Future[None]] = []
        self.pairs: collections.deque[tuple[Run, Scorer]] = collections.deque()
        self.under_way = 0  # pairs taken and not yet scored (cancelled ones stay counted)
        self.exhausted = False
        self._refilling = asyncio.Lock()

    async def run(
        self, total: int, reader: _Reader, done: list[set[str]], stop: asyncio.Event | None
    ) -> RescoreSummary:
        self.reader, self.done = reader, done
        with ProgressBar(total * len(self.scorers), enabled=self.progress, description="rescoring") as bar:
            self.bar = bar
            workers = [asyncio.ensure_future(self._work(stop)) for _ in range(min(self.concurrency, total))]
            stopped = await _until_done_or_stopped(workers, stop)
        interrupted = stopped and not (self.exhausted and not self.pairs and self.under_way == 0)
        await asyncio.gather(*self.writes)
        await self._write(self._take_buffer())  # what was done is kept, also after a stop
        return RescoreSummary(
            runs=total,
            already_scored=self.already,
            sink_errors=self.sink_errors,
            interrupted=interrupted,
            sampled_out=self.sampled_out,
            **self.counts,
        )

    async def _refill(self) -> bool:
        """Pairs from the next chunk of runs; ``False`` when the runs are all read."""
        async with self._refilling:  # one worker reads; the others wait and find the pairs
            while not self.pairs and not self.exhausted:
                chunk = await self.reader.next()
                self.exhausted = not chunk
                for run in chunk:
                    if self.sampling is not None and not self.sampling.sampled(run):
                        self.sampled_out += 1
                        for _ in self.scorers:
                            self.bar.advance()
                        continue
                    for scorer, seen in zip(self.scorers, self.done, strict=True):
                        if run.run_id in seen:
                            self.already += 1
                            self.bar.advance()
                        else:
                            self.pairs.append((run, scorer))
            return bool(self.pairs)

    async def _work(self, stop: asyncio.Event | None) -> None:
        n = 0
        while self.pairs or await self._refill():
            n += 1
            if n % YIELD_EVERY == 0:
                # Code scorers never suspend: yield now and then, so a Ctrl-C (``stop``) gets through.
                await asyncio.sleep(0)
            if stop is not None and stop.is_set():
                return
            if not self.pairs:  # another worker took the last ones while this one yielded
                continue
            run, scorer = self.pairs.popleft()
            self.under_way += 1
            record = await score_stored(
                scorer, run, source="rescore", only_succeeded="re-scoring scores only runs that succeeded"
            )
            self.under_way -= 1
            self.counts[record.outcome] += 1
            self.bar.advance(failed=record.outcome == "failed")
            self.buffer.append(record)
            if len(self.buffer) >= BATCH:
                await self._write_behind()

    async def _write_behind(self) -> None:
        """Start writing the buffer and go on scoring; wait only when ``WRITES_AHEAD`` batches are in
        flight (the store is slower than the scorers: memory stays bounded)."""
        self.writes.append(asyncio.ensure_future(self._write(self._take_buffer())))
        while len(self.writes) > WRITES_AHEAD:
            # Shielded: a stop cancelling this worker does not abandon a batch half written.
            await asyncio.shield(self.writes[0])
            self.writes = [w for w in self.writes if not w.done()]

    def _take_buffer(self) -> list[ScoreRecord]:
        batch, self.buffer = self.buffer, []
        return batch

    async def _write(self, batch: list[ScoreRecord]) -> None:
        if not batch:
            return
        for sink in self.sinks:
            try:
                await sink.write(batch)
            except Exception:  # a broken sink must not stop the re-score; counted in the summary
                self.sink_errors += 1
                logger.warning(
                    "agentevals: sink %r failed to write %d records", sink, len(batch), exc_info=True
                )


async def _until_done_or_stopped(workers: Sequence[asyncio.Future[None]], stop: asyncio.Event | None) -> bool:
    """Wait for the workers; ``True`` when ``stop`` was set first (the workers are then cancelled:
    the pairs under way are dropped, the records done stay in the buffer)."""
    everything = asyncio.gather(*workers)
    waits: list[asyncio.Future[Any]] = [everything]
    stopped = asyncio.ensure_future(stop.wait()) if stop is not None else None
    if stopped is not None:
        waits.append(stopped)
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if stopped is not None:
            stopped.cancel()
    if everything.done():
        everything.result()
        return stop is not None and stop.is_set()  # the workers saw it first
    everything.add_done_callback(lambda gathered: gathered.cancelled() or gathered.exception())  # retrieved
    for worker in workers:
        worker.cancel()
    await asyncio.gather(*workers, return_exceptions=True)
    return True


def _check_scorers(scorers: Sequence[Scorer] | Scorer) -> list[Scorer]:
    found = [scorers] if isinstance(scorers, Scorer) else list(scorers)
    if not found:
        raise ValueError("rescore needs at least one scorer, e.g. rescore(db, [create_exact_match_scorer()])")
    for scorer in found:
        if not isinstance(scorer, Scorer):
            raise TypeError(f"rescore takes Scorer objects (create_scorer(...)), got {type(scorer).__name__}")
    keys = [(s.id, s.version) for s in found]
    if len(set(keys)) != len(keys):
        raise ValueError("the same scorer (id and version) is given twice; give each scorer once")
    return found


def _as_sinks(sinks: Sequence[Any]) -> list[Any]:
    from agentevals.sinks import as_sink

    return [as_sink(s) for s in sinks]
