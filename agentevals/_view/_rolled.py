"""The overview and scorer pages' numbers from the rollup and the score histogram: per hour aggregates
the store's triggers keep (:mod:`agentevals._store._rollup`, :mod:`agentevals._store._bins`), so the
pages read a few thousand rows instead of every score. A time range's partial first and last hours are
read from the score rows (through the indexes) and added; the reads are the store's
(``agentevals._store._rollup_reads``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta

from agentevals._store import _rollup_reads
from agentevals._store._hours import as_utc, bucket_start, hour_after, hour_bucket, hour_start
from agentevals._store._rollup_reads import WholeHours
from agentevals._view._queries import Bucket, Filters, Session


@dataclass(frozen=True)
class Totals:
    """Aggregates of one scorer's rows in one time bucket, entity, outcome and error type."""

    bucket: str
    entity: str | None
    outcome: str
    error_type: str | None
    rows: int
    scores: int
    total: float  # sum of the scores
    priced: int  # rows with a judge cost
    cost: float
    tokens: int
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Outcomes:
    """Aggregates of one scorer's rows of one UTC day with one outcome, error type and skip reason."""

    day: str
    scorer_id: str
    outcome: str
    error_type: str | None
    skip_reason: str | None
    rows: int
    scores: int
    total: float  # sum of the scores
    low: float | None
    high: float | None
    priced: int  # rows with a judge cost
    cost: float
    tokens: int


def _hourly(f: Filters, scorer: str | None = None) -> tuple[WholeHours, list[Filters]]:
    """Split ``f`` into its whole hours (of its entity, source and ``scorer``, read from the rollup or
    the histogram) and the filters of the partial hours at its ends (read from the score rows)."""
    partial = []
    first = last = None
    if f.since is not None:
        since = as_utc(f.since)
        first = hour_after(since)
        if first > since:
            partial.append(replace(f, until=first if f.until is None else min(first, as_utc(f.until))))
    if f.until is not None:
        until = as_utc(f.until)
        last = hour_start(until)
        if last < until and (first is None or last >= first):
            partial.append(replace(f, since=last))
    whole = WholeHours(
        first=None if first is None else hour_bucket(first),
        last=None if last is None else hour_bucket(last),
        entity=f.entity,
        source=f.source,
        scorer_id=scorer,
    )
    return whole, partial


def outcome_totals(q: Session, f: Filters) -> list[Outcomes]:
    """Each scorer's aggregates per day, outcome, error type and skip reason under ``f``: the
    rollup's whole hours plus the rows of partial hours, or the rows alone when an eval id is
    filtered."""
    if f.eval_id is not None:
        rows = _rollup_reads.scanned_outcomes(q.reading, f)
    else:
        whole, partial = _hourly(f)
        rows = _rollup_reads.rolled_outcomes(q.reading, whole)
        for part in partial:
            rows += _rollup_reads.scanned_outcomes(q.reading, part)
    return [Outcomes(*row) for row in rows]


#: Hours of the histogram one query reads: SQLite sorts a day of bin rows in memory (a month spills
#: to merged runs; see benchmarks/README.md).
CHUNK = timedelta(days=1)

Hours = tuple[str | None, str | None]


def histogram(q: Session, f: Filters, hours: Hours = (None, None)) -> list[tuple[str, int, int]]:
    """``(scorer_id, bin, count)`` of the scores under ``f`` (no ``eval_id``), binned as
    :func:`agentevals._store._bins.score_bin`: the histogram's whole hours plus partial hours' rows.
    ``hours`` narrows it to the hour buckets from its first (with the partial hours when ``None``)
    to before its second (:func:`hour_ranges`)."""
    whole, partial = _hourly(f)
    first, last = hours
    narrowed = replace(whole, first=_bound(max, whole.first, first), last=_bound(min, whole.last, last))
    rows = _rollup_reads.rolled_histogram(q.reading, narrowed)
    for part in partial if first is None else []:
        rows += _rollup_reads.scanned_histogram(q.reading, part)
    return rows


def _bound(pick: Callable[[str, str], str], a: str | None, b: str | None) -> str | None:
    """``pick`` of two hour bounds, either of which may be ``None`` (no bound: the other)."""
    return b if a is None else a if b is None else pick(a, b)


def hour_ranges(q: Session, parts: int) -> list[list[Hours]]:
    """The histogram's hours as day-long ranges of ``bucket`` (the first open below, the last open
    above: hours written meanwhile are in them), in ``parts`` runs of about as many days each, for
    threads to read at once with :func:`histogram_over`."""
    first, last = _rollup_reads.bucket_range(q.reading)
    cuts: list[str | None] = []
    if first is not None and last is not None:
        moment, end = bucket_start(first), bucket_start(last)
        while (moment := moment + CHUNK) <= end:
            cuts.append(hour_bucket(moment))
    ranges = list(zip([None, *cuts], [*cuts, None], strict=True))
    size = -(-len(ranges) // parts)
    return [ranges[i : i + size] for i in range(0, len(ranges), size)]


def histogram_over(q: Session, f: Filters, ranges: list[Hours]) -> list[tuple[str, int, int]]:
    """:func:`histogram` of each of ``ranges``, one query each."""
    return [row for hours in ranges for row in histogram(q, f, hours)]


def scorer_totals(q: Session, scorer: str, f: Filters, bucket: Bucket) -> list[Totals]:
    """One scorer's aggregates per time bucket, entity, outcome and error type under ``f`` (no
    ``eval_id``): the rollup's whole hours plus the rows of partial hours."""
    whole, partial = _hourly(f, scorer)
    rows = _rollup_reads.rolled_scorer_totals(q.reading, whole, bucket)
    for part in partial:
        rows += _rollup_reads.scanned_scorer_totals(q.reading, scorer, part, bucket)
    return [Totals(*row) for row in rows]


def scorer_bins(q: Session, scorer: str, f: Filters, bucket: Bucket) -> list[tuple[str, int, int]]:
    """``(time bucket, bin, count)`` of one scorer's scores under ``f`` (no ``eval_id``), binned as
    :func:`agentevals._store._bins.score_bin`: the histogram's whole hours plus partial hours' rows."""
    whole, partial = _hourly(f, scorer)
    rows = _rollup_reads.rolled_scorer_bins(q.reading, whole, bucket)
    for part in partial:
        rows += _rollup_reads.scanned_scorer_bins(q.reading, scorer, part, bucket)
    return rows
