"""A computed overview or scorer page with what is read apart from its numbers (and cached on other
keys): the pass rates corrected by people's labels and the marks where a scorer's version changed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentevals._trust._agreement import Agreement
from agentevals._view import _versions
from agentevals._view._labelled import Corrected, corrected
from agentevals._view._queries import Bucket


def overview(
    data: Mapping[str, Any],
    found: Mapping[str, Agreement],
    changes: Mapping[str, Sequence[_versions.VersionChange]],
) -> dict[str, Any]:
    """``data`` (``_pages.overview``) with each scorer's ``corrected`` pass rate (``None`` without
    labels) and the version marks on its sparkline."""
    scorers = [{**s, "corrected": corrected(found.get(s["id"]))} for s in data["scorers"]]
    return {**data, "scorers": scorers, "charts": _versions.mark_sparklines(data["charts"], changes)}


def scorer(
    data: Mapping[str, Any],
    rate: Corrected | None,
    changes: Sequence[_versions.VersionChange],
    bucket: Bucket,
) -> dict[str, Any]:
    """``data`` (``_pages.scorer``) with its ``corrected`` pass rate (``None``: not shown) and the version
    marks on its time charts."""
    charts = _versions.mark_scorer(data["charts"], changes, bucket)
    return {**data, "corrected": rate, "charts": charts}
