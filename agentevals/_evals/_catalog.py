"""Reading what a store knows beside its scores: each scorer's pass threshold and the
runs the engine dropped, for ``agentevals report`` and ``agentevals view``.

Each function takes a :class:`~agentevals._store._store.Store` (from
:func:`~agentevals._store._store.open_store`: SQLite, PostgreSQL or a JSONL copy, whose tables are empty:
``JsonlSink`` keeps only records) and returns an empty answer when the store has no such table
(dropped by hand).

>>> import tempfile, pathlib
>>> from agentevals._store._store import open_store
>>> from agentevals.sinks import SQLiteSink
>>> path = pathlib.Path(tempfile.mkdtemp()) / "scores.db"
>>> SQLiteSink(path).check()
>>> with open_store(path) as store:
...     stored_thresholds(store), dropped_counts(store), dropped_runs(store)
({}, {}, 0)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from agentevals._model._thresholds import Threshold
from agentevals._store._store import Store


@dataclass(frozen=True)
class ScorerEntryInfo:
    """One row of the scorers table: a scorer as a live engine or an evaluation declared it."""

    scorer_id: str
    scorer_name: str | None
    scorer_version: str | None
    source: str
    eval_id: str | None
    step: str | None
    threshold: Threshold | None
    updated_at: str

    @property
    def key(self) -> str:
        """The scorer's key: its id, or ``"node/scorer_id"`` for an evaluation's step scorer (as
        ``run_evals`` names them)."""
        return self.scorer_id if self.step is None else f"{self.step}/{self.scorer_id}"


def stored_scorers(
    store: Store, *, eval_id: str | None = None, source: str | None = None
) -> list[ScorerEntryInfo]:
    """Every row of the store's scorers table (of evaluation ``eval_id`` / ``source`` when given),
    most recently updated first."""
    table = store.tables.scorers
    if not _has_table(store, table):
        return []
    where, params = _where([("eval_id = ?", eval_id), ("source = ?", source)])
    rows = _rows(
        store,
        "SELECT scorer_id, scorer_name, scorer_version, source, eval_id, step, threshold_min, "
        f"threshold_max, updated_at FROM {table}{where} ORDER BY updated_at DESC, scorer_id",
        params,
    )
    return [
        ScorerEntryInfo(
            scorer_id=scorer_id,
            scorer_name=name,
            scorer_version=version or None,
            source=source_,
            eval_id=eval_ or None,
            step=step or None,
            threshold=None if low is None and high is None else Threshold(min=low, max=high),
            updated_at=updated if isinstance(updated, str) else updated.astimezone(UTC).isoformat(),
        )
        for scorer_id, name, version, source_, eval_, step, low, high, updated in rows
    ]


def stored_thresholds(
    store: Store, *, eval_id: str | None = None, source: str | None = None
) -> dict[str, Threshold]:
    """Per scorer id, the pass threshold it was last declared with (by a ``ScoringEngine`` entry's
    ``threshold`` or ``run_evals``' thresholds); of evaluation ``eval_id`` / ``source`` when given. A
    scorer whose latest declaration has no threshold is left out. Step scorers of an evaluation are
    keyed ``"node/scorer_id"``, as ``run_evals`` names them."""
    return latest_thresholds(stored_scorers(store, eval_id=eval_id, source=source))


def latest_thresholds(stored: Iterable[ScorerEntryInfo]) -> dict[str, Threshold]:
    """Per scorer key, the threshold of its newest declaration in ``stored`` (newest first, as
    :func:`stored_scorers` gives them); a scorer whose newest declaration has none is left out."""
    latest: dict[str, Threshold | None] = {}
    for info in stored:
        latest.setdefault(info.key, info.threshold)
    return {key: threshold for key, threshold in latest.items() if threshold is not None}


def dropped_counts(
    store: Store,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    entity: str | None = None,
    reason: str | None = None,
) -> dict[str, int]:
    """Per scorer id, the runs a ``ScoringEngine`` dropped (queue full, evicted, offered after shutdown)
    that the scorer had sampled, counted per UTC hour: ``since`` / ``until`` take the hours that
    start in ``[since, until)`` (an hour that began before ``since`` is left out)."""
    counts = _drops(store, since, until, entity, reason)
    return {scorer_id: n for scorer_id, n in counts.items() if scorer_id}


def dropped_runs(
    store: Store,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    entity: str | None = None,
    reason: str | None = None,
) -> int:
    """The runs a ``ScoringEngine`` dropped (each once, whatever it was sampled for), as
    :func:`dropped_counts` filters them."""
    return _drops(store, since, until, entity, reason).get("", 0)


def _drops(
    store: Store, since: datetime | None, until: datetime | None, entity: str | None, reason: str | None
) -> dict[str, int]:
    table = store.tables.drops
    if not _has_table(store, table):
        return {}
    where, params = _where(
        [
            ("bucket >= ?", None if since is None else _bucket(_hour_after(since))),
            ("bucket < ?", None if until is None else _bucket(_hour_after(until))),
            ("entity = ?", entity),
            ("reason = ?", reason),
        ]
    )
    rows = _rows(store, f"SELECT scorer_id, SUM(count) FROM {table}{where} GROUP BY scorer_id", params)
    return {scorer_id: int(n) for scorer_id, n in rows}


def _where(conditions: list[tuple[str, Any]]) -> tuple[str, list[Any]]:
    """The WHERE clause of the ``(condition, value)`` pairs whose value is given, and its parameters."""
    given = [(condition, value) for condition, value in conditions if value is not None]
    clause = " WHERE " + " AND ".join(condition for condition, _ in given) if given else ""
    return clause, [value for _, value in given]


def _hour_after(moment: datetime) -> datetime:
    """The first whole UTC hour at or after ``moment`` (naive means UTC)."""
    moment = (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).astimezone(UTC)
    start = moment.replace(minute=0, second=0, microsecond=0)
    return start if start == moment else start + timedelta(hours=1)


def _bucket(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H")


def _has_table(store: Store, table: str) -> bool:
    if store.kind == "sqlite":
        sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
        return bool(_rows(store, sql, [table]))
    return _rows(store, "SELECT to_regclass(?)", [table])[0][0] is not None


def _rows(store: Store, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    cursor = store.connection.cursor()
    try:
        cursor.execute(store.sql(sql), params)
        return list(cursor.fetchall())
    finally:
        cursor.close()
