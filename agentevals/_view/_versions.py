"""Where a scorer's version changed: the first record of each of its versions after its first version,
marked on the time charts (a dashed line with the short version at the start of the bucket it falls
in), and the versions each side of a comparison covers.

>>> from datetime import UTC, datetime
>>> found = changes([("tone", "1", "2026-03-01T10:00:00+00:00"), ("tone", "2", "2026-03-05T09:30:00+00:00")])
>>> [(c.version, c.at.isoformat()) for c in found["tone"]]
[('2', '2026-03-05T09:30:00+00:00')]
>>> marks(found["tone"], "day", [1772323200, 1772928000])
[{'x': 1772668800, 'label': '2', 'version': '2', 'at': '2026-03-05 09:30 UTC'}]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agentevals._view._axes import STEP
from agentevals._view._queries import Bucket

#: Characters of a version shown on a chart (a content hash is told apart by its first few).
SHORT = 8
#: 1970-01-05, the first Monday after the epoch: weeks start on Mondays (as the store's week buckets).
_MONDAY = 4 * 86400
#: The charts of a scorer page (and a report's scorer section) drawn over time.
TIME_CHARTS = ("trend", "cost")


@dataclass(frozen=True)
class VersionChange:
    """A scorer's ``version`` first stored at ``at`` (UTC), after an earlier version."""

    version: str | None
    at: datetime

    @property
    def short(self) -> str:
        return short(self.version)


def short(version: str | None) -> str:
    """A version as a chart names it: its first :data:`SHORT` characters (``–`` for none)."""
    if version is None:
        return "–"
    return version if len(version) <= SHORT else version[:SHORT]


def changes(starts: Iterable[tuple[str, str | None, str]]) -> dict[str, list[VersionChange]]:
    """Each scorer's version changes, oldest first, from ``(scorer_id, version, first created_at)``
    rows (``_view_reads.version_starts``): every version but the one the scorer started with."""
    firsts: dict[str, list[VersionChange]] = defaultdict(list)
    for scorer_id, version, first in starts:
        firsts[scorer_id].append(VersionChange(version, _utc(first)))
    return {
        scorer_id: ordered[1:]
        for scorer_id, found in firsts.items()
        if len(ordered := sorted(found, key=lambda c: (c.at, c.version or ""))) > 1
    }


def marks(
    found: Sequence[VersionChange], bucket: Bucket, window: Sequence[int] | None
) -> list[dict[str, Any]]:
    """The marks of ``found`` on a chart of ``bucket``-long buckets spanning ``window`` (seconds): each
    at the start of its bucket, those outside the window left out."""
    if not window:
        return []
    out = []
    for change in found:
        x = bucket_start(change.at, bucket)
        if window[0] <= x <= window[1]:
            out.append(
                {
                    "x": x,
                    "label": change.short,
                    "version": change.version,
                    "at": change.at.strftime("%Y-%m-%d %H:%M UTC"),
                }
            )
    return out


def bucket_start(moment: datetime, bucket: Bucket) -> int:
    """Seconds since 1970 of the start of the UTC hour, day or week (from Monday) ``moment`` is in."""
    seconds = int(moment.timestamp())
    if bucket == "week":
        return seconds - (seconds - _MONDAY) % STEP["week"]
    return seconds - seconds % STEP[bucket]


def mark_scorer(charts: Mapping[str, Any], found: Sequence[VersionChange], bucket: Bucket) -> dict[str, Any]:
    """A scorer page's ``charts`` with the version marks on its time charts."""
    marked = dict(charts)
    for kind in TIME_CHARTS:
        chart = charts.get(kind)
        if chart is not None:
            marked[kind] = {**chart, "marks": marks(found, bucket, chart.get("window"))}
    return marked


def mark_sparklines(
    charts: Mapping[str, Any], found: Mapping[str, Sequence[VersionChange]]
) -> dict[str, Any]:
    """The overview's ``charts`` with each scorer's version marks on its daily sparkline."""
    marked = dict(charts)
    for key, chart in charts.items():
        if key.startswith("spark-") and key[len("spark-") :] in found:
            marked[key] = {**chart, "marks": marks(found[key[len("spark-") :]], "day", chart.get("window"))}
    return marked


def differing(a: Mapping[str, set[str | None]], b: Mapping[str, set[str | None]]) -> list[dict[str, Any]]:
    """The scorers both sides of a comparison scored with different sets of versions, with each
    side's versions (sorted, ``–`` for none)."""
    out = []
    for scorer_id in sorted(a.keys() & b.keys()):
        if a[scorer_id] != b[scorer_id]:
            out.append({"scorer_id": scorer_id, "a": _names(a[scorer_id]), "b": _names(b[scorer_id])})
    return out


def _names(versions: set[str | None]) -> list[str]:
    return sorted(v if v is not None else "–" for v in versions)


def _utc(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
