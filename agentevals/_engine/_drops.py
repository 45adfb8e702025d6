"""Counting the runs a ``ScoringEngine`` drops, for the sinks that store them (``write_drops``).

``submit`` counts a drop with one dict increment, under the engine's lock and only on the drop paths
(queue full, evicted, offered after shutdown): the accepting path is untouched. The engine's loop takes
the counts after each scoring round, at every flush and at shutdown, stamps them with the current UTC
hour and hands them to each sink worker, which writes them beside its record batches. A dropped run
counts once per scorer it was sampled for and once under scorer ``''`` (the run itself).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from agentevals._store._catalog_tables import DropCount
from agentevals._store._hours import hour_bucket

#: (reason, entity, ids of the scorers the run was sampled for) -> runs.
_Key = tuple[str, str, tuple[str, ...]]


class DropLedger:
    """Drops counted since the last :meth:`take`; ``count`` runs under the engine's lock."""

    __slots__ = ("_counts",)

    def __init__(self) -> None:
        self._counts: dict[_Key, int] = {}

    def count(self, reason: str, entity: str | None, scorer_ids: tuple[str, ...]) -> None:
        key = (reason, entity or "", scorer_ids)
        self._counts[key] = self._counts.get(key, 0) + 1

    def take(self, now: datetime | None = None) -> list[DropCount]:
        """The counts so far as rows for the hour of ``now`` (UTC), and a fresh start. Call it under
        the engine's lock (``submit`` writes the dict)."""
        counts, self._counts = self._counts, {}
        if not counts:
            return []
        bucket = hour_bucket(now or datetime.now(UTC))
        rows: dict[tuple[str, str, str], int] = {}
        for (reason, entity, scorer_ids), runs in counts.items():
            for scorer_id in ("", *scorer_ids):
                key = (entity, scorer_id, reason)
                rows[key] = rows.get(key, 0) + runs
        return [DropCount(bucket, e, s, r, n) for (e, s, r), n in sorted(rows.items())]


def merge(pending: Iterable[DropCount]) -> list[DropCount]:
    """``pending`` with the counts of equal keys added (counts a failed write left behind, plus new ones).

    >>> merge([DropCount("h", "", "a", "overflow", 1), DropCount("h", "", "a", "overflow", 2)])
    [DropCount(bucket='h', entity='', scorer_id='a', reason='overflow', count=3)]
    """
    totals: dict[tuple[str, str, str, str], int] = {}
    for d in pending:
        key = (d.bucket, d.entity, d.scorer_id, d.reason)
        totals[key] = totals.get(key, 0) + d.count
    return [DropCount(*key, count) for key, count in sorted(totals.items())]
