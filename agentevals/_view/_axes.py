"""The charts' axes, decided with their data (``charts.js`` draws them as given): a time axis spans
the buckets drawn, one bucket either side of a lone one (left to uPlot, a lone point's axis spans
years); histogram bars fill their axis; counts, costs and tokens start at 0.

>>> time_window([7200], 3600), bar_window([0.0, 0.5]), from_zero([3, None, 10])
([3600, 10800], [0.0, 1.0], [0, 11.0])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentevals._view._queries import Bucket

#: Seconds in each time bucket of the scorer page (``?bucket=``).
STEP: dict[Bucket, int] = {"hour": 3600, "day": 86400, "week": 7 * 86400}

#: Room above the largest amount on an axis from 0, as a share of it (the top bar is not cut).
HEADROOM = 0.1


def time_window(starts: Sequence[int], step: int) -> list[int] | None:
    """The span of a time axis over buckets starting at ``starts`` (seconds) ``step`` seconds long:
    the first to the last, or one bucket either side of a single one (``None``: nothing to draw)."""
    if not starts:
        return None
    low, high = min(starts), max(starts)
    return [low - step, high + step] if low == high else [low, high]


def bar_window(edges: Sequence[float]) -> list[float] | None:
    """The span of a histogram's axis over bars of equal width at left ``edges``: the first bar's left
    edge to the last's right; a lone bar (every score equal, outside 0..1) is 1 wide with 1 either side
    (``None``: no bars)."""
    if not edges:
        return None
    if len(edges) == 1:
        return [edges[0] - 1, edges[0] + 2]
    return [edges[0], edges[-1] + (edges[1] - edges[0])]


def from_zero(amounts: Iterable[float | None]) -> list[float]:
    """A y axis from 0 over non-negative ``amounts`` (``None``: none in that bucket) with
    :data:`HEADROOM` above the largest; 0..1 when every one is 0 or ``None``."""
    top = max((a for a in amounts if a is not None), default=0)
    return [0, top + top * HEADROOM] if top > 0 else [0, 1]
