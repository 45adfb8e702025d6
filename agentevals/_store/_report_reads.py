"""The reads behind ``agentevals report``: score records created at or after ``since`` (naive means UTC),
of ``source`` when given (of any source but ``canary`` otherwise).

The per-group aggregates come from the rollup (whole hours from ``since`` on, see ``_rollup``) plus
the score rows of the rest of the hour ``since`` falls in; each scorer's runs take one
``COUNT(DISTINCT run_id)``, the lowest scores one top-N query, a pass rate one count through the
(scorer, created_at) index.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agentevals._model._thresholds import Threshold
from agentevals._store._hours import as_utc, hour_after, hour_bucket
from agentevals._store._reading import REJUDGED_SOURCE, Reading, source_condition, where


def _scope(q: Reading, since: datetime | None, source: str | None, alias: str = "") -> list[tuple[str, Any]]:
    # SQLite: created_at is ISO-8601 UTC text, so text order is time order.
    moment = None if since is None else q.dialect.timestamp(since)
    return [(f"{alias}created_at >= ?", moment), source_condition(source, f"{alias}source")]


def rolled_groups(q: Reading, *, since: datetime | None, source: str | None) -> list[tuple[Any, ...]]:
    """The aggregates of the whole hours from ``since`` on, from the rollup, grouped by day, entity,
    scorer, skip reason, outcome and error type (a few thousand groups): per group those six, then its
    rows, scores, sum and sum of squares of the scores, lowest and highest score, cost and tokens."""
    start = None if since is None else hour_bucket(hour_after(since))
    clause, params = where([source_condition(source), ("bucket >= ?", start)])
    total = "CAST(SUM({}) AS BIGINT)"
    rows = q.rows(
        "SELECT substr(bucket, 1, 10), entity, scorer_id, skip_reason, outcome, error_type, "
        f"{total.format('rows')}, {total.format('scores')}, SUM(total), SUM(squares), MIN(low), "
        f"MAX(high), CASE WHEN SUM(priced) > 0 THEN SUM(cost) END, {total.format('tokens')} "
        f"FROM {q.tables.rollup}{clause} GROUP BY 1, 2, 3, 4, 5, 6",
        params,
    )
    # The rollup stores NULL key values as '' (see _rollup).
    return [(row[0], *(value or None for value in row[1:6]), *row[6:]) for row in rows]


def partial_hour_groups(q: Reading, *, since: datetime | None, source: str | None) -> list[tuple[Any, ...]]:
    """The same aggregates from the score rows between ``since`` and the next whole hour (read through
    the (scorer, created_at) index for the scorers the rollup has in that hour)."""
    if since is None or hour_after(since) == as_utc(since):
        return []
    scorers = [
        row[0]
        for row in q.rows(
            f"SELECT DISTINCT scorer_id FROM {q.tables.rollup} WHERE bucket = ?", [hour_bucket(since)]
        )
    ]
    if not scorers:
        return []
    keys = f"{q.dialect.times['day']}, entity, scorer_id, skip_reason, outcome, error_type"
    clause, params = where(
        [*_scope(q, since, source), ("created_at < ?", q.dialect.timestamp(hour_after(since)))]
    )
    return q.rows(
        f"SELECT {keys}, COUNT(*), COUNT(score), SUM(score), SUM(score * score), MIN(score), "
        "MAX(score), SUM(cost_usd), "
        "COALESCE(SUM(prompt_tokens), 0) + COALESCE(SUM(completion_tokens), 0) "
        f"FROM {q.tables.scores}{clause} AND scorer_id IN ({', '.join('?' * len(scorers))}) "
        f"GROUP BY {keys}",
        [*params, *scorers],
    )


def stored_runs(q: Reading, *, since: datetime | None, source: str | None) -> int:
    """How many runs are stored."""
    clause, params = where(_scope(q, since, source))
    return int(q.rows(f"SELECT COUNT(*) FROM {q.tables.runs}{clause}", params)[0][0])


def covered_runs(q: Reading, *, since: datetime | None, source: str | None) -> dict[str, int]:
    """Per scorer, the runs it has a row for."""
    clause, params = where(_scope(q, since, source))
    rows = q.rows(
        f"SELECT scorer_id, COUNT(DISTINCT run_id) FROM {q.tables.scores}{clause} GROUP BY scorer_id",
        params,
    )
    return {scorer_id: int(n) for scorer_id, n in rows}


def lowest_scores(
    q: Reading, *, since: datetime | None, source: str | None, limit: int, input_chars: int
) -> list[tuple[Any, ...]]:
    """The ``limit`` lowest scores, newest first among equals: ``(score, scorer_id, entity, run_id,
    created_at, reason, input)``, ``input`` the first ``input_chars`` characters of the run's stored
    input (JSON text; ``None`` without a stored run)."""
    if not limit:
        return []
    clause, params = where(_scope(q, since, source, alias="s."), always=["s.score IS NOT NULL"])
    start = q.dialect.text_start.format(c="r.input", n=input_chars)
    return q.rows(
        f"SELECT s.score, s.scorer_id, s.entity, s.run_id, s.created_at, s.reason, {start} "
        f"FROM {q.tables.scores} s LEFT JOIN {q.tables.runs} r ON r.run_id = s.run_id{clause} "
        "ORDER BY s.score, s.created_at DESC LIMIT ?",
        [*params, limit],
    )


def pass_counts(
    q: Reading, *, scorer_id: str, threshold: Threshold, since: datetime | None, source: str | None
) -> tuple[int, int, int]:
    """``(scores, errored records, scores meeting threshold)`` of ``scorer_id`` (skipped records are
    neither)."""
    bounds, bound_params = [], []
    if threshold.min is not None:
        bounds.append("score >= ?")
        bound_params.append(threshold.min)
    if threshold.max is not None:
        bounds.append("score <= ?")
        bound_params.append(threshold.max)
    clause, params = where(_scope(q, since, source), always=["scorer_id = ?", "outcome <> 'skipped'"])
    row = q.rows(
        "SELECT COUNT(score), COUNT(*) - COUNT(score), "
        f"SUM(CASE WHEN score IS NOT NULL AND {' AND '.join(bounds)} THEN 1 ELSE 0 END) "
        f"FROM {q.tables.scores}{clause}",
        [*bound_params, scorer_id, *params],
    )[0]
    return int(row[0]), int(row[1]), int(row[2] or 0)


def rejudged_records(q: Reading, *, since: datetime | None) -> int:
    """How many records created at or after ``since`` judge runs scored already again (canary epochs),
    which the reads of any source leave out: the rollup's whole hours, and the rows of the hour ``since``
    falls in."""
    start = None if since is None else hour_bucket(hour_after(since))
    clause, params = where([source_condition(REJUDGED_SOURCE), ("bucket >= ?", start)])
    count = int(q.rows(f"SELECT COALESCE(SUM(rows), 0) FROM {q.tables.rollup}{clause}", params)[0][0])
    if since is None or hour_after(since) == as_utc(since):
        return count
    clause, params = where(
        [
            *_scope(q, since, REJUDGED_SOURCE),
            ("created_at < ?", q.dialect.timestamp(hour_after(since))),
        ]
    )
    return count + int(q.rows(f"SELECT COUNT(*) FROM {q.tables.scores}{clause}", params)[0][0])
