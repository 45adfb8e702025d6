"""The viewer's reads of the rollup and the score histogram (per hour aggregates the store's triggers
keep, see ``_rollup`` and ``_bins``), each beside the same read over the score rows: the overview and
scorer pages add the rollup's whole hours (``rolled_*``) to the rows of the partial hours at a time
range's ends (``scanned_*``, through the indexes), and scan the rows alone when an eval id is filtered.
The rollup stores ``NULL`` key values as ``''``; these reads give ``None`` for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentevals._store._bins import bin_sql
from agentevals._store._reading import Reading, source_condition, where
from agentevals._store._view_reads import ScoreFilter, filtered, float_or_none

#: ``(day, scorer_id, outcome, error_type, skip_reason, rows, scores, sum of scores, lowest, highest,
#: rows with a judge cost, cost, tokens)``.
DayOutcome = tuple[
    str, str, str, str | None, str | None, int, int, float, float | None, float | None, int, float, int
]
#: ``(time bucket, entity, outcome, error_type, rows, scores, sum of scores, rows with a judge cost, cost,
#: tokens, lowest, highest)``.
ScorerTotal = tuple[
    str, str | None, str, str | None, int, int, float, int, float, int, float | None, float | None
]
#: ``(scorer_id or time bucket, bin, count)``.
BinCount = tuple[str, int, int]


@dataclass(frozen=True)
class WholeHours:
    """The rollup or histogram rows of the hour buckets (``YYYY-MM-DDTHH``) from ``first`` to before
    ``last`` (``None``: open), of an entity, a source and a scorer when given."""

    first: str | None = None
    last: str | None = None
    entity: str | None = None
    source: str | None = None
    scorer_id: str | None = None


def _rolled(h: WholeHours) -> tuple[str, list[Any]]:
    return where(
        [
            ("bucket >= ?", h.first),
            ("bucket < ?", h.last),
            ("entity = ?", h.entity),
            source_condition(h.source),
            ("scorer_id = ?", h.scorer_id),
        ]
    )


def bucket_range(q: Reading) -> tuple[str | None, str | None]:
    """The first and last hour bucket of the histogram (``None`` when it is empty)."""
    bins = q.tables.bins  # two subqueries: SQLite reads MIN and MAX together by a scan
    first, last = q.rows(f"SELECT (SELECT MIN(bucket) FROM {bins}), (SELECT MAX(bucket) FROM {bins})")[0]
    return (None, None) if first is None else (str(first), str(last))


def rolled_outcomes(q: Reading, h: WholeHours) -> list[DayOutcome]:
    """Each scorer's aggregates per UTC day, outcome, error type and skip reason in the hours ``h``."""
    clause, params = _rolled(h)
    rows = q.rows(
        f"SELECT {q.dialect.rolled_times['day']}, scorer_id, outcome, error_type, skip_reason, SUM(rows), "
        "SUM(scores), SUM(total), MIN(low), MAX(high), SUM(priced), SUM(cost), SUM(tokens) "
        f"FROM {q.tables.rollup}{clause} GROUP BY 1, 2, 3, 4, 5",
        params,
    )
    return [_day_outcome(row) for row in rows]


def scanned_outcomes(q: Reading, f: ScoreFilter) -> list[DayOutcome]:
    """:func:`rolled_outcomes` of the score rows under ``f``."""
    clause, params = filtered(q, f)
    rows = q.rows(
        f"SELECT {q.dialect.times['day']}, scorer_id, outcome, COALESCE(error_type, ''), "
        "COALESCE(skip_reason, ''), COUNT(*), COUNT(score), COALESCE(SUM(score), 0), MIN(score), "
        "MAX(score), COUNT(cost_usd), COALESCE(SUM(cost_usd), 0), "
        "COALESCE(SUM(prompt_tokens), 0) + COALESCE(SUM(completion_tokens), 0) "
        f"FROM {q.tables.scores}{clause} GROUP BY 1, 2, 3, 4, 5",
        params,
    )
    return [_day_outcome(row) for row in rows]


def _day_outcome(row: tuple[Any, ...]) -> DayOutcome:
    d, s, o, e, k, n, c, t, lo, hi, p, y, z = row
    low, high = float_or_none(lo), float_or_none(hi)
    return (
        str(d),
        str(s),
        o,
        e or None,
        k or None,
        int(n),
        int(c),
        float(t),
        low,
        high,
        int(p),
        float(y),
        int(z),
    )


def rolled_histogram(q: Reading, h: WholeHours) -> list[BinCount]:
    """``(scorer_id, bin, count)`` of the scores in the hours ``h``, binned as ``_bins.score_bin``."""
    clause, params = _rolled(h)
    rows = q.rows(f"SELECT scorer_id, bin, SUM(count) FROM {q.tables.bins}{clause} GROUP BY 1, 2", params)
    return [(str(s), int(b), int(n)) for s, b, n in rows]


def scanned_histogram(q: Reading, f: ScoreFilter) -> list[BinCount]:
    """:func:`rolled_histogram` of the score rows under ``f``."""
    clause, params = filtered(q, f, extra=["score IS NOT NULL"])
    rows = q.rows(
        f"SELECT scorer_id, {bin_sql(q.dialect)}, COUNT(*) FROM {q.tables.scores}{clause} GROUP BY 1, 2",
        params,
    )
    return [(str(s), int(b), int(n)) for s, b, n in rows]


def rolled_scorer_totals(q: Reading, h: WholeHours, bucket: str) -> list[ScorerTotal]:
    """One scorer's aggregates per time bucket (``hour``, ``day``, ``week``), entity, outcome and error
    type in the hours ``h`` (whose ``scorer_id`` names the scorer)."""
    clause, params = _rolled(h)
    rows = q.rows(
        f"SELECT {q.dialect.rolled_times[bucket]}, entity, outcome, error_type, SUM(rows), SUM(scores), "
        "SUM(total), SUM(priced), SUM(cost), SUM(tokens), MIN(low), MAX(high) "
        f"FROM {q.tables.rollup}{clause} GROUP BY 1, 2, 3, 4",
        params,
    )
    return [_scorer_total(row) for row in rows]


def scanned_scorer_totals(q: Reading, scorer: str, f: ScoreFilter, bucket: str) -> list[ScorerTotal]:
    """:func:`rolled_scorer_totals` of the score rows of ``scorer`` under ``f``."""
    clause, params = filtered(q, f, extra=["scorer_id = ?"])
    rows = q.rows(
        f"SELECT {q.dialect.times[bucket]}, COALESCE(entity, ''), outcome, COALESCE(error_type, ''), "
        "COUNT(*), COUNT(score), COALESCE(SUM(score), 0), COUNT(cost_usd), "
        "COALESCE(SUM(cost_usd), 0), COALESCE(SUM(prompt_tokens), 0) + "
        "COALESCE(SUM(completion_tokens), 0), MIN(score), MAX(score) "
        f"FROM {q.tables.scores}{clause} GROUP BY 1, 2, 3, 4",
        [scorer, *params],
    )
    return [_scorer_total(row) for row in rows]


def _scorer_total(row: tuple[Any, ...]) -> ScorerTotal:
    k, e, o, x, n, c, t, p, y, z, lo, hi = row
    low, high = float_or_none(lo), float_or_none(hi)
    return (str(k), e or None, o, x or None, int(n), int(c), float(t), int(p), float(y), int(z), low, high)


def rolled_scorer_bins(q: Reading, h: WholeHours, bucket: str) -> list[BinCount]:
    """``(time bucket, bin, count)`` of one scorer's scores in the hours ``h`` (whose ``scorer_id``
    names the scorer), binned as ``_bins.score_bin``."""
    clause, params = _rolled(h)
    rows = q.rows(
        f"SELECT {q.dialect.rolled_times[bucket]}, bin, SUM(count) FROM {q.tables.bins}{clause} "
        "GROUP BY 1, 2",
        params,
    )
    return [(str(k), int(b), int(n)) for k, b, n in rows]


def scanned_scorer_bins(q: Reading, scorer: str, f: ScoreFilter, bucket: str) -> list[BinCount]:
    """:func:`rolled_scorer_bins` of the score rows of ``scorer`` under ``f``."""
    clause, params = filtered(q, f, extra=["scorer_id = ?", "score IS NOT NULL"])
    rows = q.rows(
        f"SELECT {q.dialect.times[bucket]}, {bin_sql(q.dialect)}, COUNT(*) FROM {q.tables.scores}{clause} "
        "GROUP BY 1, 2",
        [scorer, *params],
    )
    return [(str(k), int(b), int(n)) for k, b, n in rows]
