"""The viewer's access to a store: a :class:`Reader` keeps the store open, each request reads it in a
:class:`Session` (a connection of its own), and a session's methods are the pages' queries, which the
store runs (``agentevals._store._view_reads``; the rollup's in :mod:`agentevals._view._rolled`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypeVar

from agentevals._store import _labels, _view_reads
from agentevals._store._reading import Reading, parallel
from agentevals._store._row import TABLE
from agentevals._store._store import Store, display_address, open_store

Bucket = Literal["hour", "day", "week"]
BUCKETS: tuple[Bucket, ...] = ("hour", "day", "week")
#: Rows per page of the runs list.
PAGE_SIZE = 50
#: Reads one page runs at once.
_THREADS = 8

T = TypeVar("T")


@dataclass(frozen=True)
class Filters:
    """What the pages narrow the scores to: a time range (naive means UTC) and an agent/chain."""

    since: datetime | None = None
    until: datetime | None = None
    entity: str | None = None
    eval_id: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class Binned:
    """One scorer's rows in one time bucket with one outcome, error type and score (to 0.001)."""

    bucket: str
    outcome: str
    error_type: str | None
    value: float | None  # the score, rounded to 0.001 (None: no score)
    rows: int
    passed: int  # scores within the threshold's bounds (exact)
    cost: float | None
    tokens: int
    total: float  # sum of the scores (exact)


class Reader:
    """A store opened for the viewer through :func:`open_store` (checked, a ``.jsonl`` file loaded into a
    temporary SQLite copy) and kept open until :meth:`close`; each
    request reads it on short connections of its own (:meth:`session`)."""

    def __init__(self, address: str | os.PathLike[str], *, table: str = TABLE) -> None:
        self.store = open_store(address, table=table)
        self.address = str(address)
        self.display = display_address(address)
        self._store_lock = threading.Lock()

    @property
    def database(self) -> str:
        """What to open again for another reader (``build_report``): the SQLite file read (a JSONL
        store's copy), else the address."""
        return self.address if self.store.database is None else str(self.store.database)

    def close(self) -> None:
        """Close the store, after any read on its connection (closing one under a read crashes
        SQLite: the app's start-up warm-up may still be reading when the server stops)."""
        with self._store_lock:
            self.store.close()

    def with_store(self, read: Callable[[Store], T]) -> T:
        """``read(store)`` on the store's own connection, one caller at a time (for the readers of
        :mod:`agentevals._evals._catalog`: the thresholds and drops the store keeps)."""
        with self._store_lock:
            return read(self.store)

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A read-only connection, closed on leaving the block."""
        with self.store.session() as reading:
            yield Session(reading)

    def parallel(self, jobs: Sequence[Callable[[Session], Any]]) -> list[Any]:
        """``[job(session) for job in jobs]``, run at once in threads, each on a connection of its own
        (sqlite3 and psycopg release the GIL while a query runs)."""
        return parallel([_in_session(job) for job in jobs], self.store.session, threads=_THREADS)

    def state(self) -> State:
        """What the caches of computed pages key on, read on one connection."""
        with self.store.session() as reading:
            return State(_view_reads.newest_rows(reading), _view_reads.labels_state(reading))


@dataclass(frozen=True)
class State:
    """A store's state as the caches of computed pages see it: ``rows`` changes when rows are added (the
    newest row of the scores and runs tables: SQLite's rowid, PostgreSQL's row count and newest
    timestamp), ``labels`` when a label is added or deleted (their count and newest ``created_at``)."""

    rows: tuple[Any, ...]
    labels: tuple[Any, ...]


def _in_session(job: Callable[[Session], T]) -> Callable[[Reading], T]:
    return lambda reading: job(Session(reading))


class Session:
    """One connection to the store: the queries of the pages (see ``agentevals._store._view_reads``)."""

    def __init__(self, reading: Reading) -> None:
        self.reading = reading

    # -- choices for the filter forms ----------------------------------------------------------------

    def choices(self, limit: int = 200) -> dict[str, Any]:
        """The filter forms' choices: entities, scorers, eval ids and the time range of the scores."""
        return _view_reads.choices(self.reading, limit)

    def latest_evals(self, limit: int = 2) -> list[str]:
        """The ids of the most recent evaluations, newest first."""
        return _view_reads.latest_evals(self.reading, limit)

    # -- coverage --------------------------------------------------------------------------------------

    def scorers_since(self, since: datetime | None) -> list[str]:
        """The scorers the rollup has rows of from the hour of ``since`` on (or any), sorted."""
        return _view_reads.scorers_since(self.reading, since)

    def covered_runs(
        self, scorer: str, since: datetime | None, eval_id: str | None = None
    ) -> tuple[int, int]:
        """``(rows, distinct runs)`` of one scorer from ``since`` on, of one evaluation when ``eval_id``
        is given."""
        return _view_reads.covered_runs(self.reading, scorer, Filters(since=since, eval_id=eval_id))

    def stored_runs(self, since: datetime | None, eval_id: str | None = None) -> int:
        """How many runs are stored from ``since`` on, of one evaluation when ``eval_id`` is given."""
        return _view_reads.stored_runs(self.reading, Filters(since=since, eval_id=eval_id))

    # -- distributions -------------------------------------------------------------------------------

    def bins(
        self, f: Filters, bounds: dict[str, tuple[float, float]], default: tuple[float, float]
    ) -> list[tuple[str, str, str | None, float | None, int, int]]:
        """``(scorer_id, outcome, error_type, bin, count, passed)``: scores per scorer and outcome,
        binned; ``passed`` counts the scores within the scorer's bounds (``default`` for a scorer not
        in ``bounds``)."""
        return _view_reads.binned_outcomes(self.reading, f, bounds, default)

    def passes(self, scorer: str, f: Filters, bounds: tuple[float, float]) -> int:
        """How many of one scorer's scores lie within ``(low, high)``: the overview's pass count where
        the histogram's bins cannot tell it."""
        return _view_reads.passes(self.reading, scorer, f, bounds)

    def series(self, scorer: str, f: Filters, bucket: Bucket, bounds: tuple[float, float]) -> list[Binned]:
        """One scorer's rows over time, binned (``ROUND(score, 3)``): the row path of the scorer page,
        for what the rollup cannot filter (an eval id) or bin (scores outside 0..1, a threshold that is
        not a whole bin or has a maximum); ``passed`` counts the scores within ``(low, high)``."""
        return [Binned(*row) for row in _view_reads.series(self.reading, scorer, f, bucket, bounds)]

    def by_entity(self, scorer: str, f: Filters) -> list[tuple[str | None, int, float, int, int]]:
        """``(entity, rows, sum of scores, scores, failures)`` of one scorer's rows."""
        return _view_reads.by_entity(self.reading, scorer, f)

    def by_version_and_models(
        self, scorer: str, f: Filters
    ) -> list[tuple[str | None, str | None, int, float, int, int]]:
        """``(scorer version, agent models, rows, sum of scores, scores, failures)`` of one scorer."""
        return _view_reads.by_version_and_models(self.reading, scorer, f)

    def version_starts(self) -> list[tuple[str, str | None, str]]:
        """``(scorer_id, scorer_version, first created_at)`` of each scorer's versions."""
        return _view_reads.version_starts(self.reading)

    # -- labels ----------------------------------------------------------------------------------------

    def label_names(self) -> list[str]:
        """The distinct names of the stored labels."""
        return _labels.label_names(self.reading)

    def version_passes(
        self, scorer: str, f: Filters, bounds: tuple[float, float]
    ) -> list[tuple[str | None, int, int, int, Any]]:
        """Per version of one scorer under ``f``: ``(scorer_version, scores, errored, passed, newest
        created_at)``, ``passed`` counting the scores within ``(low, high)``."""
        return _view_reads.version_passes(self.reading, scorer, f, bounds)

    def run_labels(self, run_id: str) -> list[tuple[Any, ...]]:
        """The labels of one run (``_labels.LABEL_COLUMNS``), oldest first; none without a labels table."""
        if not self.reading.has_table(self.reading.tables.labels):
            return []
        return _labels.label_rows(self.reading, run_id=run_id, name=None)

    # -- runs ------------------------------------------------------------------------------------------

    def score_rows(
        self,
        f: Filters,
        *,
        scorer: str | None = None,
        outcome: str | None = None,
        low: float | None = None,
        high: float | None = None,
        page: int = 0,
    ) -> list[dict[str, Any]]:
        """One page of score rows (and the first of the next page), worst first (lowest score; failed
        and skipped rows after the scored)."""
        return _view_reads.score_rows(
            self.reading,
            f,
            scorer=scorer,
            outcome=outcome,
            low=low,
            high=high,
            page=page,
            page_size=PAGE_SIZE,
        )

    def run(self, run_id: str) -> dict[str, Any] | None:
        """The stored row of one run, ``None`` when it is not stored."""
        return _view_reads.run_row(self.reading, run_id)

    def run_scores(self, run_id: str) -> list[dict[str, Any]]:
        """Every score record of a run, with each of ``COLUMNS``."""
        return _view_reads.run_scores(self.reading, run_id)

    # -- compare ---------------------------------------------------------------------------------------

    def moments(self, f: Filters) -> list[tuple[str, str | None, int, float | None, float | None]]:
        """``(scorer_id, scorer_version, n, sum, sum of squares)`` of the scores under ``f``."""
        return _view_reads.moments(self.reading, f)

    def item_means(self, f: Filters) -> dict[tuple[str, str], tuple[float, str]]:
        """Mean score per (scorer, item), an item being a run's input (its JSON text), with a run id."""
        return _view_reads.item_means(self.reading, f)
