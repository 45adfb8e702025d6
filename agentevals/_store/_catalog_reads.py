"""Reads of the tables beside the scores (see ``_catalog_tables``): each scorer's row, and the counts of
the runs the engine dropped. A table dropped by hand reads as empty (a JSONL store's are empty:
``JsonlSink`` keeps only records)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agentevals._store._hours import hour_after, hour_bucket
from agentevals._store._reading import Reading, where

#: The columns :func:`scorer_rows` gives, in order.
SCORER_FIELDS = (
    "scorer_id",
    "scorer_name",
    "scorer_version",
    "source",
    "eval_id",
    "step",
    "threshold_min",
    "threshold_max",
    "updated_at",
)


def scorer_rows(q: Reading, *, eval_id: str | None, source: str | None) -> list[tuple[Any, ...]]:
    """The rows of the scorers table (:data:`SCORER_FIELDS`; of evaluation ``eval_id`` / ``source`` when
    given), most recently updated first."""
    table = q.tables.scorers
    if not q.has_table(table):
        return []
    clause, params = where([("eval_id = ?", eval_id), ("source = ?", source)])
    return q.rows(
        f"SELECT {', '.join(SCORER_FIELDS)} FROM {table}{clause} ORDER BY updated_at DESC, scorer_id", params
    )


def dropped_per_scorer(
    q: Reading,
    *,
    since: datetime | None,
    until: datetime | None,
    entity: str | None,
    reason: str | None,
) -> dict[str, int]:
    """Per scorer id (``''``: the dropped runs themselves), the runs dropped in the UTC hours that start
    in ``[since, until)`` (naive means UTC), of ``entity`` / for ``reason`` when given."""
    table = q.tables.drops
    if not q.has_table(table):
        return {}
    clause, params = where(
        [
            ("bucket >= ?", None if since is None else hour_bucket(hour_after(since))),
            ("bucket < ?", None if until is None else hour_bucket(hour_after(until))),
            ("entity = ?", entity),
            ("reason = ?", reason),
        ]
    )
    rows = q.rows(f"SELECT scorer_id, SUM(count) FROM {table}{clause} GROUP BY scorer_id", params)
    return {scorer_id: int(n) for scorer_id, n in rows}
