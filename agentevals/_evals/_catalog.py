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
from datetime import UTC, datetime

from agentevals._model._thresholds import Threshold
from agentevals._store._catalog_reads import dropped_per_scorer, scorer_rows
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
    rows = scorer_rows(store.reading, eval_id=eval_id, source=source)
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
    that the scorer had sampled, counted per UTC hour: ``since`` / ``until`` (naive means UTC) take the
    hours that start in ``[since, until)`` (an hour that began before ``since`` is left out)."""
    counts = dropped_per_scorer(store.reading, since=since, until=until, entity=entity, reason=reason)
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
    counts = dropped_per_scorer(store.reading, since=since, until=until, entity=entity, reason=reason)
    return counts.get("", 0)
