"""Numbers from binned scores: percentiles, means, histograms, and a two-sample significance hint.

>>> bins = [(0.0, 1), (0.5, 2), (1.0, 7)]
>>> percentile(bins, 0.1), percentile(bins, 0.5), round(mean(bins) or 0, 2)
(0.0, 1.0, 0.8)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def percentile(bins: Sequence[tuple[float, int]], q: float) -> float | None:
    """The ``q`` quantile (0..1, nearest rank) of scores given as ``(value, count)`` pairs."""
    return percentiles(bins, (q,))[0]


def percentiles(bins: Sequence[tuple[float, int]], qs: Sequence[float]) -> list[float | None]:
    """The ``qs`` quantiles (ascending, 0..1, nearest rank) of scores given as ``(value, count)`` pairs.

    >>> percentiles([(0.9, 1), (0.1, 3)], (0.5, 1.0))
    [0.1, 0.9]
    """
    ordered = sorted(bins)
    total = sum(n for _, n in ordered)
    if not total:
        return [None for _ in qs]
    out: list[float | None] = []
    seen, at = 0, 0
    for q in qs:
        rank = max(1, math.ceil(q * total))
        while at < len(ordered) and seen + ordered[at][1] < rank:
            seen += ordered[at][1]
            at += 1
        out.append(ordered[min(at, len(ordered) - 1)][0])
    return out


def threshold_bin(threshold: float) -> int | None:
    """The score histogram's bin (0.01 wide) that starts at ``threshold`` (``None``: not a whole bin in
    0.01..0.99, so the histogram cannot count the scores at or above it).

    >>> threshold_bin(0.35), threshold_bin(0.355), threshold_bin(1.0)
    (35, None, None)
    """
    edge = threshold * 100
    return round(edge) if 1 <= round(edge) <= 99 and abs(edge - round(edge)) < 1e-6 else None


def mean(bins: Iterable[tuple[float, int]]) -> float | None:
    total = count = 0.0
    for value, n in bins:
        total += value * n
        count += n
    return total / count if count else None


def histogram(bins: Sequence[tuple[float, int]], buckets: int = 20) -> tuple[list[float], list[int]]:
    """``(left edges, counts)`` of ``buckets`` equal-width bars over the scores' range (0..1 when the
    scores lie inside it)."""
    if not bins:
        return [], []
    low = min(v for v, _ in bins)
    high = max(v for v, _ in bins)
    if low >= 0.0 and high <= 1.0:
        low, high = 0.0, 1.0
    if high == low:
        return [low], [sum(n for _, n in bins)]
    width = (high - low) / buckets
    counts = [0] * buckets
    for value, n in bins:  # the nudge: 0.15 / 0.05 is 2.9999999999999996, and 0.15 starts bar 3
        counts[min(int((value - low) / width + 1e-9), buckets - 1)] += n
    return [round(low + i * width, 6) for i in range(buckets)], counts


@dataclass(frozen=True)
class Delta:
    """Scores of one scorer on two sides: means, the difference, Welch's t and a plain-words hint."""

    n_a: int
    n_b: int
    mean_a: float | None
    mean_b: float | None
    delta: float | None
    t: float | None
    hint: str


def compare(a: tuple[int, float | None, float | None], b: tuple[int, float | None, float | None]) -> Delta:
    """Welch's t of two samples given as ``(n, sum, sum of squares)``. ``|t| >= 2`` (about p < 0.05
    for a few dozen scores or more) is called significant; fewer than 2 scores a side cannot tell.

    >>> compare((100, 80.0, 70.0), (100, 60.0, 50.0)).hint
    'significant'
    """
    mean_a, var_a = _moments(*a)
    mean_b, var_b = _moments(*b)
    delta = None if mean_a is None or mean_b is None else mean_b - mean_a
    if delta is None or var_a is None or var_b is None:
        return Delta(a[0], b[0], mean_a, mean_b, delta, None, "too few scores")
    spread = math.sqrt(var_a / a[0] + var_b / b[0])
    if spread == 0.0:  # no spread on either side: any difference at all is certain
        return Delta(a[0], b[0], mean_a, mean_b, delta, None, "within noise" if delta == 0 else "significant")
    t = delta / spread
    return Delta(a[0], b[0], mean_a, mean_b, delta, t, "significant" if abs(t) >= 2.0 else "within noise")


def _moments(n: int, total: float | None, squares: float | None) -> tuple[float | None, float | None]:
    if not n or total is None:
        return None, None
    mean_value = total / n
    if n < 2 or squares is None:
        return mean_value, None
    return mean_value, max(squares / n - mean_value * mean_value, 0.0) * n / (n - 1)
