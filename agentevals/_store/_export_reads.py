"""The rows ``agentevals export`` writes: each score row joined with a summary of its run, oldest first,
streamed from the store (a server-side cursor on PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from agentevals._store._reading import where
from agentevals._store._row import COLUMNS
from agentevals._store._store import Store

#: (exported field, runs column) of the run's fields an exported row carries after the score's columns.
RUN_FIELDS: tuple[tuple[str, str], ...] = (
    ("trace_id", "trace_id"),
    ("input", "input"),
    ("output", "output"),
    ("ground_truth", "ground_truth"),
    ("models", "models"),
    ("run_duration_ms", "duration_ms"),
    ("input_tokens", "input_tokens"),
    ("output_tokens", "output_tokens"),
    ("run_cost_usd", "cost_usd"),
    ("run_error", "error"),
)


def scores_with_runs(
    store: Store, *, since: datetime | None, scorer: str | None, entity: str | None
) -> Iterator[tuple[Any, ...]]:
    """The score rows created at or after ``since`` (naive means UTC), of scorer id ``scorer`` and of
    ``entity`` when given, oldest first: ``COLUMNS`` then the run's :data:`RUN_FIELDS` (``NULL`` without
    a stored run), JSON columns as the store gives them (``Dialect.json_as_text``)."""
    clause, params = where(
        [
            ("s.created_at >= ?", None if since is None else store.dialect.timestamp(since)),
            ("s.scorer_id = ?", scorer),
            ("s.entity = ?", entity),
        ]
    )
    names = store.tables
    columns = [f"s.{name}" for name in COLUMNS] + [f"r.{column}" for _, column in RUN_FIELDS]
    return store.stream(
        f"SELECT {', '.join(columns)} FROM {names.scores} s "
        f"LEFT JOIN {names.runs} r ON r.run_id = s.run_id{clause} ORDER BY s.created_at, s.id",
        params,
    )
