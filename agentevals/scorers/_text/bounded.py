"""Edit distances with a bounded cost: exact on normal inputs, a conservative estimate on huge ones.

An exact edit (or LCS) distance costs time proportional to ``len(a) × len(b)`` (rapidfuzz's bit-parallel
algorithms divide that by 64), so two 1 MB texts would block the event loop for many seconds.
:func:`bounded_distance` is exact while ``len(a) × len(b) ≤ EXACT_LIMIT`` (two 100 kB texts; timings in
benchmarks/README.md), and exact beyond it when the texts are within ``EXACT_LIMIT // max(len)`` edits of
each other (a banded search). Otherwise it returns the sum of the distances of aligned slices (both texts
cut into the same number of proportional pieces): an upper bound on the true distance, so the similarity
derived from it is a lower bound, flagged as not exact.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

EXACT_LIMIT = 10**10
"""``len(a) × len(b)`` up to which a distance is computed exactly, whatever the texts."""

Distance = Callable[..., int]
"""A rapidfuzz ``distance(a, b, *, score_cutoff=None)`` function."""


def bounded_distance(distance: Distance, a: Any, b: Any, limit: int = EXACT_LIMIT) -> tuple[int, bool]:
    """``(distance, exact)``; the work is about ``3 × limit`` character pairs at most.

    >>> from rapidfuzz.distance import Levenshtein
    >>> bounded_distance(Levenshtein.distance, "kitten", "sitting")
    (3, True)
    """
    longest = max(len(a), len(b))
    if len(a) * len(b) <= limit:
        return distance(a, b), True
    cutoff = max(1, limit // longest)
    found = distance(a, b, score_cutoff=cutoff)
    if found <= cutoff:
        return found, True
    pieces = -(-len(a) * len(b) // limit)
    total = sum(
        distance(
            a[len(a) * i // pieces : len(a) * (i + 1) // pieces],
            b[len(b) * i // pieces : len(b) * (i + 1) // pieces],
        )
        for i in range(pieces)
    )
    return total, False
