"""A scorer page's numbers (over time, distribution, breakdowns, failures, judge cost) gathered from the
rollup and the score histogram (:func:`from_aggregates`) or from the score rows (:func:`from_series`),
and turned into the page's data (:func:`page`)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agentevals._view import _stats
from agentevals._view._axes import STEP, bar_window, from_zero, time_window
from agentevals._view._queries import Binned, Bucket
from agentevals._view._rolled import Totals
from agentevals._view._thresholds import Bound
from agentevals._view._transcript import loads


def epoch(bucket: str) -> int:
    """Seconds since 1970 of a bucket label (``2026-01-02`` or ``2026-01-02T03:00``), UTC."""
    return int(datetime.fromisoformat(bucket).replace(tzinfo=UTC).timestamp())


Versions = list[tuple[str | None, str | None, int, float, int, int]]


class _Acc:
    """One scorer's numbers in one time bucket (or in all): rows, scores and their sum, judge cost and
    tokens, extremes, and the scores as ``(value, count)`` pairs (a histogram bin's count at its
    lower edge: its percentiles are then kept within the exact extremes)."""

    __slots__ = ("bins", "cost", "high", "low", "priced", "rows", "scores", "tokens", "total")

    def __init__(self) -> None:
        self.rows = self.scores = self.priced = self.tokens = 0
        self.total = self.cost = 0.0
        self.low: float | None = None
        self.high: float | None = None
        self.bins: list[tuple[float, int]] = []

    def add(self, rows: int, scores: int, total: float, priced: int, cost: float, tokens: int) -> None:
        self.rows += rows
        self.scores += scores
        self.total += total
        self.priced += priced
        self.cost += cost
        self.tokens += tokens

    def extremes(self, low: float | None, high: float | None) -> None:
        if low is not None:
            self.low = low if self.low is None else min(self.low, low)
        if high is not None:
            self.high = high if self.high is None else max(self.high, high)

    def percentiles(self, *qs: float) -> list[float | None]:
        out = []
        for value in _stats.percentiles(self.bins, qs):
            if value is not None and self.low is not None and self.high is not None:
                value = min(max(value, self.low), self.high)
            out.append(value)
        return out

    def point(self, key: str) -> dict[str, Any]:
        p10, p50, p90 = self.percentiles(0.1, 0.5, 0.9)
        return {
            "x": epoch(key),
            "mean": round(self.total / self.scores, 4) if self.scores else None,
            "p10": p10,
            "p50": p50,
            "p90": p90,
            "cost": self.cost if self.priced else None,
            "tokens": self.tokens,
        }


@dataclass
class Numbers:
    """What a scorer page shows, gathered from the rollup and histogram or from the score rows."""

    outcomes: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    buckets: dict[str, _Acc] = field(default_factory=lambda: defaultdict(_Acc))
    whole: _Acc = field(default_factory=_Acc)
    passed: int = 0
    entities: list[tuple[str | None, int, float, int, int]] = field(default_factory=list)

    def count(self, outcome: str, error_type: str | None, rows: int) -> None:
        self.outcomes[outcome] += rows
        if outcome == "failed":
            self.errors[error_type or "error"] += rows


def from_aggregates(totals: list[Totals], histogram: list[tuple[str, int, int]], edge: int | None) -> Numbers:
    """A scorer page's numbers from :func:`_rolled.scorer_totals` and :func:`_rolled.scorer_bins`
    (scores in 0..1; ``edge``: the threshold's bin, ``None`` when the bins cannot tell a pass: the
    caller counts the passes from the rows)."""
    out = Numbers()
    entities: dict[str | None, list[Any]] = {}
    for t in totals:
        out.count(t.outcome, t.error_type, t.rows)
        for acc in (out.buckets[t.bucket], out.whole):
            acc.add(t.rows, t.scores, t.total, t.priced, t.cost, t.tokens)
            acc.extremes(t.low, t.high)
        e = entities.setdefault(t.entity, [t.entity, 0, 0.0, 0, 0])
        e[1] += t.rows
        e[2] += t.total
        e[3] += t.scores
        e[4] += t.rows if t.outcome == "failed" else 0
    out.entities = [(k, n, total, scored, failed) for k, n, total, scored, failed in entities.values()]
    whole: Counter[int] = Counter()
    buckets = out.buckets
    for key, index, n in histogram:
        buckets[key].bins.append((index / 100, n))
        whole[index] += n
    out.whole.bins = [(index / 100, n) for index, n in whole.items()]
    if edge is not None:
        out.passed = sum(n for index, n in whole.items() if index >= edge)
    return out


def from_series(series: list[Binned], entities: list[tuple[str | None, int, float, int, int]]) -> Numbers:
    """A scorer page's numbers from :meth:`Session.series` and :meth:`Session.by_entity` (the rows)."""
    out = Numbers(entities=entities)
    for b in series:
        out.count(b.outcome, b.error_type, b.rows)
        for acc in (out.buckets[b.bucket], out.whole):
            scored = 0 if b.value is None else b.rows
            acc.add(b.rows, scored, b.total, b.cost is not None, b.cost or 0.0, b.tokens)
            if b.value is not None:
                acc.bins.append((b.value, b.rows))
        out.passed += b.passed
    return out


def in_range(totals: list[Totals]) -> bool:
    """Whether every score lies in 0..1 (the histogram's bins clamp the others)."""
    return all((t.low is None or t.low >= 0.0) and (t.high is None or t.high <= 1.0) for t in totals)


def by_versions(versions: Versions) -> dict[str, Any]:
    return {
        "agent model": [(_models(k), *rest) for k, *rest in _merge((m, *rest) for _, m, *rest in versions)],
        "scorer version": _merge((v, *rest) for v, _, *rest in versions),
    }


def page(
    scorer_id: str, threshold: Bound, numbers: Numbers, versions: Versions | None, bucket: Bucket
) -> dict[str, Any]:
    whole = numbers.whole
    points = [numbers.buckets[key].point(key) for key in sorted(numbers.buckets)]
    edges, counts = _stats.histogram(whole.bins)
    p10, p50 = whole.percentiles(0.1, 0.5)
    judged = whole.scores + numbers.outcomes["failed"]  # a failed record counts as not passed
    summary = {
        "scored": whole.scores,
        "mean": whole.total / whole.scores if whole.scores else None,
        "p10": p10,
        "p50": p50,
        "passed": numbers.passed,
        "pass_total": judged,
        "pass_rate": numbers.passed / judged if judged else None,
    }
    entities = _merge((e, *rest) for e, *rest in numbers.entities)
    return {
        "id": scorer_id,
        "threshold": threshold,
        "outcomes": dict(numbers.outcomes),
        "errors": numbers.errors.most_common(),
        "summary": summary,
        "charts": charts(points, edges, counts, STEP[bucket]),
        "breakdowns": {
            "agent or chain": entities,
            **(by_versions(versions) if versions is not None else dict.fromkeys(_DEFERRED_BREAKDOWNS)),
        },
        "deferred": versions is None,
    }


_DEFERRED_BREAKDOWNS = ("agent model", "scorer version")


def charts(points: list[dict[str, Any]], edges: list[float], counts: list[int], step: int) -> dict[str, Any]:
    """A scorer page's charts with their axes (:mod:`agentevals._view._axes`) from its time buckets'
    :meth:`_Acc.point` (``step`` seconds long) and its histogram. A chart with nothing to draw is left
    out: the trend and the histogram without a score, the judge cost without a cost or a token."""
    out: dict[str, Any] = {}
    window = time_window([p["x"] for p in points], step)
    if any(p["mean"] is not None for p in points):
        out["trend"] = {name: [p[name] for p in points] for name in ("x", "mean", "p10", "p50", "p90")}
        out["trend"]["window"] = window
    if counts:
        out["histogram"] = {"x": edges, "y": counts, "window": bar_window(edges), "range": from_zero(counts)}
    if any(p["cost"] is not None or p["tokens"] for p in points):
        cost = {name: [p[name] for p in points] for name in ("x", "cost", "tokens")}
        out["cost"] = {
            **cost,
            "window": window,
            "range": from_zero(cost["cost"]),
            "tokens_range": from_zero(cost["tokens"]),
        }
    return out


def _merge(groups: Iterable[tuple[Any, ...]]) -> list[tuple[str | None, int, float | None, int]]:
    """``(key, rows, mean, failures)`` per key of ``(key, rows, sum of scores, scores, failures)``
    groups, most rows first (at most 50)."""
    acc: dict[str | None, list[Any]] = {}
    for key, n, total, scored, failed in groups:
        a = acc.setdefault(key, [0, 0.0, 0, 0])
        a[0] += n
        a[1] += total
        a[2] += scored
        a[3] += failed
    rows = [
        (key, n, total / scored if scored else None, failed)
        for key, (n, total, scored, failed) in acc.items()
    ]
    return sorted(rows, key=lambda row: (-row[1], row[0] or ""))[:50]


def _models(stored: str | None) -> str | None:
    """A run's stored models (a JSON list) as ``a, b``."""
    models = loads(stored)
    return ", ".join(map(str, models)) if isinstance(models, list) else stored
