"""The viewer's reads of the rollup and the score histogram: per hour aggregates
the store's triggers keep (:mod:`agentevals._store._rollup`, :mod:`agentevals._store._bins`), so the
overview and scorer pages read a few thousand rows instead of every score. A time range's partial first
and last hours are read from the score rows (through the indexes) and added."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from agentevals._view._queries import Bucket, Filters, Session, _float


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


def _hourly(q: Session, f: Filters, scorer: str | None = None) -> tuple[str, list[Any], list[Filters]]:
    """Split ``f`` into whole hours (a ``WHERE`` over the rollup/histogram's ``bucket``, entity,
    source and ``scorer``) and the filters of the partial hours at its ends (read from the score
    rows)."""
    clauses, params, partial = [], [], []
    first = last = None
    if f.since is not None:
        since = f.since.astimezone(UTC)
        first = since.replace(minute=0, second=0, microsecond=0)
        if first < since:
            first += timedelta(hours=1)
            partial.append(replace(f, until=first if f.until is None else min(first, f.until)))
        clauses.append("bucket >= ?")
        params.append(first.strftime("%Y-%m-%dT%H"))
    if f.until is not None:
        until = f.until.astimezone(UTC)
        last = until.replace(minute=0, second=0, microsecond=0)
        if last < until and (first is None or last >= first):
            partial.append(replace(f, since=last))
        clauses.append("bucket < ?")
        params.append(last.strftime("%Y-%m-%dT%H"))
    for column, value in (("entity", f.entity), ("source", f.source), ("scorer_id", scorer)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params, partial


def outcome_totals(q: Session, f: Filters) -> list[Outcomes]:
    """Each scorer's aggregates per day, outcome, error type and skip reason under ``f``: the
    rollup's whole hours plus the rows of partial hours, or the rows alone when an eval id is
    filtered."""
    scan = (
        f"SELECT {q.d.buckets['day']}, scorer_id, outcome, COALESCE(error_type, ''), "
        "COALESCE(skip_reason, ''), COUNT(*), COUNT(score), COALESCE(SUM(score), 0), MIN(score), "
        "MAX(score), COUNT(cost_usd), COALESCE(SUM(cost_usd), 0), "
        "COALESCE(SUM(prompt_tokens), 0) + COALESCE(SUM(completion_tokens), 0) "
        f"FROM {q.scores}{{}} GROUP BY 1, 2, 3, 4, 5"
    )
    if f.eval_id is not None:
        where, params = q.where(f)
        rows = q.rows(scan.format(where), params)
    else:
        where, params, partial = _hourly(q, f)
        rows = q.rows(
            f"SELECT {q.d.rolled['day']}, scorer_id, outcome, error_type, skip_reason, SUM(rows), "
            "SUM(scores), SUM(total), MIN(low), MAX(high), SUM(priced), SUM(cost), SUM(tokens) "
            f"FROM {q.reader.tables.rollup}{where} GROUP BY 1, 2, 3, 4, 5",
            params,
        )
        for part in partial:
            where, params = q.where(part)
            rows += q.rows(scan.format(where), params)
    return [
        Outcomes(
            str(d),
            str(s),
            o,
            e or None,
            k or None,
            int(n),
            int(c),
            float(t),
            _float(lo),
            _float(hi),
            int(p),
            float(y),
            int(z),
        )
        for d, s, o, e, k, n, c, t, lo, hi, p, y, z in rows
    ]


#: Hours of the histogram one query reads: SQLite sorts a day of bin rows in memory (a month spills
#: to merged runs; see benchmarks/README.md).
CHUNK = timedelta(days=1)

Hours = tuple[str | None, str | None]


def histogram(q: Session, f: Filters, hours: Hours = (None, None)) -> list[tuple[str, int, int]]:
    """``(scorer_id, bin, count)`` of the scores under ``f`` (no ``eval_id``), binned as
    :func:`agentevals._store._bins.score_bin`: the histogram's whole hours plus partial hours' rows.
    ``hours`` narrows it to the hour buckets from its first (with the partial hours when ``None``)
    to before its second (:func:`hour_ranges`)."""
    where, params, partial = _hourly(q, f)
    for clause, bound in zip(("bucket >= ?", "bucket < ?"), hours, strict=True):
        if bound is not None:
            where += f"{' AND ' if where else ' WHERE '}{clause}"
            params.append(bound)
    rows = q.rows(
        f"SELECT scorer_id, bin, SUM(count) FROM {q.reader.tables.bins}{where} GROUP BY 1, 2",
        params,
    )
    expression = _bin(q)
    for part in partial if hours[0] is None else []:
        where, params = q.where(part, extra=["score IS NOT NULL"])
        rows += q.rows(
            f"SELECT scorer_id, {expression}, COUNT(*) FROM {q.scores}{where} GROUP BY 1, 2", params
        )
    return [(str(s), int(b), int(n)) for s, b, n in rows]


def hour_ranges(q: Session, parts: int) -> list[list[Hours]]:
    """The histogram's hours as day-long ranges of ``bucket`` (the first open below, the last open
    above: hours written meanwhile are in them), in ``parts`` runs of about as many days each, for
    threads to read at once with :func:`histogram_over`."""
    bins = q.reader.tables.bins  # two subqueries: SQLite reads MIN and MAX together by a scan
    first, last = q.rows(f"SELECT (SELECT MIN(bucket) FROM {bins}), (SELECT MAX(bucket) FROM {bins})")[0]
    cuts: list[str | None] = []
    if first is not None:
        moment, end = (datetime.strptime(str(b), "%Y-%m-%dT%H") for b in (first, last))
        while (moment := moment + CHUNK) <= end:
            cuts.append(moment.strftime("%Y-%m-%dT%H"))
    ranges = list(zip([None, *cuts], [*cuts, None], strict=True))
    size = -(-len(ranges) // parts)
    return [ranges[i : i + size] for i in range(0, len(ranges), size)]


def histogram_over(q: Session, f: Filters, ranges: list[Hours]) -> list[tuple[str, int, int]]:
    """:func:`histogram` of each of ``ranges``, one query each."""
    return [row for hours in ranges for row in histogram(q, f, hours)]


def scorer_totals(q: Session, scorer: str, f: Filters, bucket: Bucket) -> list[Totals]:
    """One scorer's aggregates per time bucket, entity, outcome and error type under ``f`` (no
    ``eval_id``): the rollup's whole hours plus the rows of partial hours."""
    where, params, partial = _hourly(q, f, scorer)
    rows = q.rows(
        f"SELECT {q.d.rolled[bucket]}, entity, outcome, error_type, SUM(rows), SUM(scores), "
        "SUM(total), SUM(priced), SUM(cost), SUM(tokens), MIN(low), MAX(high) "
        f"FROM {q.reader.tables.rollup}{where} GROUP BY 1, 2, 3, 4",
        params,
    )
    for part in partial:
        where, params = q.where(part, extra=["scorer_id = ?"])
        rows += q.rows(
            f"SELECT {q.d.buckets[bucket]}, COALESCE(entity, ''), outcome, COALESCE(error_type, ''), "
            "COUNT(*), COUNT(score), COALESCE(SUM(score), 0), COUNT(cost_usd), "
            "COALESCE(SUM(cost_usd), 0), COALESCE(SUM(prompt_tokens), 0) + "
            "COALESCE(SUM(completion_tokens), 0), MIN(score), MAX(score) "
            f"FROM {q.scores}{where} GROUP BY 1, 2, 3, 4",
            [scorer, *params],
        )
    return [
        Totals(
            str(k),
            e or None,
            o,
            x or None,
            int(n),
            int(c),
            float(t),
            int(p),
            float(y),
            int(z),
            _float(lo),
            _float(hi),
        )
        for k, e, o, x, n, c, t, p, y, z, lo, hi in rows
    ]


def scorer_bins(q: Session, scorer: str, f: Filters, bucket: Bucket) -> list[tuple[str, int, int]]:
    """``(time bucket, bin, count)`` of one scorer's scores under ``f`` (no ``eval_id``), binned as
    :func:`agentevals._store._bins.score_bin`: the histogram's whole hours plus partial hours' rows."""
    where, params, partial = _hourly(q, f, scorer)
    rows = q.rows(
        f"SELECT {q.d.rolled[bucket]}, bin, SUM(count) FROM {q.reader.tables.bins}{where} GROUP BY 1, 2",
        params,
    )
    for part in partial:
        where, params = q.where(part, extra=["scorer_id = ?", "score IS NOT NULL"])
        rows += q.rows(
            f"SELECT {q.d.buckets[bucket]}, {_bin(q)}, COUNT(*) FROM {q.scores}{where} GROUP BY 1, 2",
            [scorer, *params],
        )
    return [(str(k), int(b), int(n)) for k, b, n in rows]


def _bin(q: Session) -> str:
    from agentevals._store import _bins, _rollup

    return _bins.bin_sql(_rollup.SQLITE if q.reader.kind == "sqlite" else _rollup.POSTGRES)
