"""The reads of a labelling session and of a canary: the scores that decide which runs a person labels
first, a run's latest record of one scorer, the runs a labeller has labelled, the scorers' stored
thresholds, and the records of a canary epoch.

A canary epoch's records are stored with ``source = 'canary'`` and the epoch's id as their ``eval_id``
(so each epoch adds rows rather than replacing the last one's).
"""

from __future__ import annotations

from typing import Any

from agentevals._model._thresholds import Threshold
from agentevals._store._catalog_reads import scorer_rows
from agentevals._store._reading import Reading

#: The columns of a record :func:`latest_record` gives, in order.
LATEST_FIELDS = ("scorer_version", "outcome", "score", "reason", "source", "created_at")
#: The columns of a record :func:`epoch_records` gives, in order.
EPOCH_FIELDS = ("run_id", "scorer_version", "outcome", "score", "created_at")


def scores_to_pick_from(q: Reading, scorer_id: str, *, every_scorer: bool) -> list[tuple[Any, ...]]:
    """``run_id, scorer_id, score, created_at`` of the scored records of ``scorer_id``, and with
    ``every_scorer`` those of every scorer on the runs ``scorer_id`` scored."""
    scored = "outcome = 'scored' AND score IS NOT NULL"
    if not every_scorer:
        return q.rows(
            f"SELECT run_id, scorer_id, score, created_at FROM {q.tables.scores} "
            f"WHERE scorer_id = ? AND {scored}",
            [scorer_id],
        )
    return q.rows(
        f"SELECT run_id, scorer_id, score, created_at FROM {q.tables.scores} WHERE {scored} AND run_id IN "
        f"(SELECT run_id FROM {q.tables.scores} WHERE scorer_id = ? AND {scored})",
        [scorer_id],
    )


def latest_record(q: Reading, run_id: str, scorer_id: str) -> dict[str, Any] | None:
    """The newest record of ``scorer_id`` on ``run_id`` (:data:`LATEST_FIELDS`), ``None`` without one."""
    rows = q.rows(
        f"SELECT {', '.join(LATEST_FIELDS)} FROM {q.tables.scores} WHERE run_id = ? AND scorer_id = ? "
        "ORDER BY created_at DESC, id DESC LIMIT 1",
        [run_id, scorer_id],
    )
    return dict(zip(LATEST_FIELDS, rows[0], strict=True)) if rows else None


def labelled_by(q: Reading, name: str, labeller: str) -> set[str]:
    """The runs ``labeller`` gave a label named ``name``."""
    rows = q.rows(
        f"SELECT DISTINCT run_id FROM {q.tables.labels} WHERE name = ? AND labeller = ?", [name, labeller]
    )
    return {row[0] for row in rows}


def stored_thresholds(q: Reading) -> dict[str, Threshold]:
    """Each scorer's threshold as its newest declaration in the store gives it (scorers declared
    without one are left out)."""
    found: dict[str, Threshold | None] = {}
    for row in scorer_rows(q, eval_id=None, source=None):  # newest first
        scorer_id, step, low, high = row[0], row[5], row[6], row[7]
        if not step and scorer_id not in found:
            found[scorer_id] = None if low is None and high is None else Threshold(min=low, max=high)
    return {scorer_id: threshold for scorer_id, threshold in found.items() if threshold is not None}


def latest_canary_epoch(q: Reading, scorer_id: str) -> str | None:
    """The id of the newest canary epoch of ``scorer_id`` stored, ``None`` before the first."""
    rows = q.rows(
        f"SELECT eval_id FROM {q.tables.scores} WHERE scorer_id = ? AND source = 'canary' "
        "AND eval_id IS NOT NULL GROUP BY eval_id ORDER BY MAX(created_at) DESC, eval_id DESC LIMIT 1",
        [scorer_id],
    )
    return str(rows[0][0]) if rows else None


def epoch_records(q: Reading, scorer_id: str, epoch_id: str) -> list[tuple[Any, ...]]:
    """The records of ``scorer_id`` in canary epoch ``epoch_id`` (:data:`EPOCH_FIELDS`)."""
    return q.rows(
        f"SELECT {', '.join(EPOCH_FIELDS)} FROM {q.tables.scores} "
        "WHERE eval_id = ? AND scorer_id = ? AND source = 'canary' ORDER BY created_at, run_id",
        [epoch_id, scorer_id],
    )
