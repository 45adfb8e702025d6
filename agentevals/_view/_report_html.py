"""``agentevals report --html FILE``: the overview, each labelled scorer's agreement with people and its
corrected pass rates, every scorer's charts (marked where its version changed) and a comparison in one
self-contained HTML file (data, CSS and chart code inline) to attach to a pull request or CI run."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from agentevals._evals._catalog import stored_scorers
from agentevals._model._thresholds import Threshold
from agentevals._store._store import Store
from agentevals._trust._agreement import Agreement, labelled_agreements, worst_disagreements
from agentevals._trust._stats import MIN_LABELS_PER_CLASS
from agentevals._view import _annotated, _pages, _thresholds, _versions
from agentevals._view._app import HOST, PORT
from agentevals._view._labelled import corrected
from agentevals._view._queries import Filters, Reader, Session
from agentevals._view._render import render


def write_report(
    address: str | os.PathLike[str],
    path: str | os.PathLike[str],
    *,
    filters: Filters | None = None,
    table: str = "agentevals_scores",
    settings: _pages.Settings | None = None,
    min_labels: int = MIN_LABELS_PER_CLASS,
) -> Path:
    """Write the report of the store at ``address`` to ``path`` and return it. The comparison is of
    the two latest evaluations when the store holds two (``filters.eval_id``: that one and the one
    before), otherwise of the last 7 days against the 7 before. Pass thresholds: ``settings``' own,
    else those the store keeps (``filters.eval_id``'s), else the default. A scorer with labels gets its
    agreement with people, its pass rates corrected once each class has ``min_labels`` labels (counting
    the records since ``filters.since``, of ``filters.source``). Raises ``ValueError`` without a store."""
    filters = filters or Filters()
    with Reader(address, table=table) as reader, reader.session() as q:
        stored = _thresholds.in_scope(reader.with_store(stored_scorers), filters.eval_id)
        config = (settings or _pages.Settings()).scoped(stored)
        data = _pages.overview(reader, filters, config)
        scorer_ids = [s["id"] for s in data["scorers"]]
        agreement = reader.with_store(partial(_agreements, scorer_ids, config, filters, min_labels))
        found = {a.scorer: a for a in agreement}
        changes = _versions.changes(q.version_starts())
        data = _annotated.overview(data, found, changes)
        charts: dict[str, Any] = dict(data["charts"])
        sections = []
        for index, s in enumerate(data["scorers"]):
            scorer = _annotated.scorer(
                _pages.scorer(reader, s["id"], filters, "day", config),
                corrected(found.get(s["id"])),
                changes.get(s["id"], []),
                "day",
            )
            prefix = f"s{index}-"
            charts.update({prefix + key: value for key, value in scorer["charts"].items()})
            sections.append({"data": scorer, "prefix": prefix})
        sides = _sides(q, filters)
        comparison = None
        if sides is not None:
            comparison = _pages.compare(reader, sides[0], sides[1])
            charts["compare"] = comparison["chart"]
    page = render(
        "report.html",
        inline=True,
        title="agentevals report",
        store=reader.display,
        path="",
        data=data,
        sections=sections,
        agreement=agreement,
        viewer=f"http://{HOST}:{PORT}",
        comparison=comparison,
        sides=None if sides is None else [_describe(side) for side in sides],
        filters=_describe(filters),
        generated=datetime.now(UTC).isoformat(timespec="seconds"),
        charts=charts,
    )
    out = Path(path)
    out.write_text(page, encoding="utf-8")
    return out


def _agreements(
    scorer_ids: list[str], config: _pages.Settings, filters: Filters, min_labels: int, store: Store
) -> list[Agreement]:
    """Each labelled scorer's agreement with people, its worst disagreements listed."""
    found = labelled_agreements(
        store.reading,
        scorer_ids,
        partial(_given, config),
        min_per_class=min_labels,
        since=filters.since,
        source=filters.source,
    )
    return [worst_disagreements(a) for a in found]


def _given(config: _pages.Settings, scorer: str) -> Threshold | None:
    """The threshold ``--pass-threshold`` gives ``scorer``; ``None``: the stored one, else 0.5."""
    if scorer in config.thresholds:
        return Threshold(min=config.thresholds[scorer])
    return Threshold(min=config.default) if config.default_given else None


def _sides(q: Session, f: Filters) -> tuple[Filters, Filters] | None:
    evals = q.latest_evals(limit=50) if f.eval_id else q.latest_evals()
    if f.eval_id is not None:
        later = evals[evals.index(f.eval_id) + 1 :] if f.eval_id in evals else []
        return (replace(f, eval_id=later[0]), f) if later else None
    if len(evals) >= 2:
        return replace(f, eval_id=evals[1]), replace(f, eval_id=evals[0])
    now = datetime.now(UTC)
    week = timedelta(days=7)
    return replace(f, since=now - 2 * week, until=now - week), replace(f, since=now - week, until=None)


def _describe(f: Filters) -> str:
    parts = []
    if f.eval_id:
        parts.append(f"eval {f.eval_id}")
    if f.since:
        parts.append(f"since {f.since.isoformat(timespec='minutes')}")
    if f.until:
        parts.append(f"until {f.until.isoformat(timespec='minutes')}")
    if f.entity:
        parts.append(f"agent {f.entity}")
    if f.source:
        parts.append(f"source {f.source}")
    return ", ".join(parts) or "all records"
