"""The two small tables beside the scores: what a store knows about its scorers and
about the runs the engine dropped, and the statements the SQL sinks write them with.

``agentevals_scorers``: one row per (scorer, version, source, evaluation, step) with the scorer's name
and pass threshold (``threshold_min`` / ``threshold_max``, both ``NULL`` without one), written when a
``ScoringEngine`` starts (``source="live"``, ``eval_id=''``) and when ``run_evals`` starts (one row per
scorer of the evaluation); a later start replaces the row and its ``updated_at``.

``agentevals_drops``: per UTC hour (``YYYY-MM-DDTHH``), entity, scorer and reason (``overflow``,
``evicted``, ``shutdown``), how many runs the engine dropped that the scorer had sampled; the row with
``scorer_id=''`` counts the dropped runs themselves (once each, whatever they were sampled for). Counts
are added (an upsert), so each batch of counts is written once. ``NULL`` keys are stored as ``''``.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentevals._store._dialect import Dialect
from agentevals._store._row import Tables

#: The drops table's key columns.
DROP_KEY = ("bucket", "entity", "scorer_id", "reason")
#: The scorers table's key columns.
SCORER_KEY = ("scorer_id", "scorer_version", "source", "eval_id", "step")
#: Every column of the scorers table, in the order :meth:`ScorerInfo.row` gives them.
SCORER_COLUMNS = (*SCORER_KEY, "scorer_name", "threshold_min", "threshold_max", "updated_at")


@dataclass(frozen=True)
class ScorerInfo:
    """One scorer as a store's scorers table holds it (``''`` for an absent version, evaluation or step).

    >>> ScorerInfo("relevancy", "Relevancy", "3f2a", "live", threshold_min=0.7).row("2026-01-01")[:6]
    ('relevancy', '3f2a', 'live', '', '', 'Relevancy')
    """

    scorer_id: str
    scorer_name: str
    scorer_version: str | None
    source: str
    eval_id: str | None = None
    step: str | None = None
    threshold_min: float | None = None
    threshold_max: float | None = None

    def row(self, updated_at: object) -> tuple[object, ...]:
        """The values in :data:`SCORER_COLUMNS` order."""
        return (
            self.scorer_id,
            self.scorer_version or "",
            self.source,
            self.eval_id or "",
            self.step or "",
            self.scorer_name,
            self.threshold_min,
            self.threshold_max,
            updated_at,
        )


@dataclass(frozen=True)
class DropCount:
    """``count`` runs dropped in the UTC hour ``bucket`` (``YYYY-MM-DDTHH``) for ``scorer_id`` (``''``:
    the runs themselves) of ``entity`` (``''`` when unknown), for ``reason``."""

    bucket: str
    entity: str
    scorer_id: str
    reason: str
    count: int

    def row(self) -> tuple[object, ...]:
        return (self.bucket, self.entity, self.scorer_id, self.reason, self.count)


def create_statements(t: Tables, d: Dialect) -> list[str]:
    """``CREATE TABLE`` statements of both tables (idempotent)."""
    real, moment, count = (d.column_types[kind] for kind in ("real", "timestamp_null", "count"))
    tail = d.keyed_table
    scorer_keys = ", ".join(f"{name} TEXT NOT NULL" for name in SCORER_KEY)
    drop_keys = ", ".join(f"{name} TEXT NOT NULL" for name in DROP_KEY)
    return [
        f"CREATE TABLE IF NOT EXISTS {t.scorers} ({scorer_keys}, scorer_name TEXT, threshold_min {real}, "
        f"threshold_max {real}, updated_at {moment} NOT NULL, PRIMARY KEY ({', '.join(SCORER_KEY)})){tail}",
        f"CREATE TABLE IF NOT EXISTS {t.drops} ({drop_keys}, count {count} NOT NULL, "
        f"PRIMARY KEY ({', '.join(DROP_KEY)})){tail}",
    ]


def upsert_scorers_sql(t: Tables, d: Dialect) -> str:
    """The statement storing one :class:`ScorerInfo` row, replacing the row of its key."""
    values = ", ".join([d.mark] * len(SCORER_COLUMNS))
    updates = ", ".join(f"{c} = excluded.{c}" for c in SCORER_COLUMNS if c not in SCORER_KEY)
    return (
        f"INSERT INTO {t.scorers} ({', '.join(SCORER_COLUMNS)}) VALUES ({values}) "
        f"ON CONFLICT ({', '.join(SCORER_KEY)}) DO UPDATE SET {updates}"
    )


def add_drops_sql(t: Tables, d: Dialect) -> str:
    """The statement adding one :class:`DropCount` row to the stored count of its key."""
    values = ", ".join([d.mark] * (len(DROP_KEY) + 1))
    return (
        f"INSERT INTO {t.drops} ({', '.join(DROP_KEY)}, count) VALUES ({values}) "
        f"ON CONFLICT ({', '.join(DROP_KEY)}) DO UPDATE SET count = {t.drops}.count + excluded.count"
    )
