"""Sørensen–Dice similarity of character bigrams, as JavaScript ``string-similarity``.

``dice_similarity`` reproduces ``compareTwoStrings`` from the npm package
``string-similarity`` 4.0.4, including its quirks: all whitespace is removed first, the comparison is
case-sensitive, bigrams are counted as a multiset, and lengths are UTF-16 code
units (an emoji counts as two characters).

Bigrams are read straight from the UTF-16 encoding as 32-bit codes (two code units
each). Short texts count them with a ``Counter``; from a few hundred characters on,
sorting the codes with numpy is faster. Both give the same count.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from types import ModuleType

from agentevals.scorers._text._js import remove_whitespace

_NUMPY_FROM = 200
"""Code units from which the numpy path is faster than the Counter path."""


@cache
def _numpy() -> ModuleType:
    import numpy  # imported on first long comparison: short texts never pay for it

    return numpy


def _bigram_counts(encoded: bytes) -> Counter[int]:
    # Even and odd 4-byte windows of the UTF-16 bytes are all the bigrams of code units.
    units = len(encoded) // 2
    counts = Counter(memoryview(encoded[: units // 2 * 4]).cast("I"))
    counts.update(memoryview(encoded[2 : 2 + (units - 1) // 2 * 4]).cast("I"))
    return counts


def _common_small(first: bytes, second: bytes) -> int:
    small, large = _bigram_counts(first), _bigram_counts(second)
    if len(small) > len(large):
        small, large = large, small
    common = small.keys() & large.keys()
    return sum(map(min, map(small.__getitem__, common), map(large.__getitem__, common)))


def _common_large(first: bytes, second: bytes) -> int:
    np = _numpy()

    def unique_bigrams(encoded: bytes) -> tuple[object, object]:
        units = np.frombuffer(encoded, dtype="<u2").astype(np.uint32)
        return np.unique((units[:-1] << 16) | units[1:], return_counts=True)  # type: ignore[no-any-return]

    codes_a, counts_a = unique_bigrams(first)
    codes_b, counts_b = unique_bigrams(second)
    _, index_a, index_b = np.intersect1d(codes_a, codes_b, assume_unique=True, return_indices=True)
    return int(np.minimum(counts_a[index_a], counts_b[index_b]).sum())  # type: ignore[index]


def dice_similarity(a: str, b: str) -> float:
    """Return ``2·|bigrams(a) ∩ bigrams(b)| / (len(a) + len(b) - 2)`` after removing whitespace.

    Equal strings (including two empty or all-whitespace strings) score 1; a
    string shorter than two characters scores 0 against anything else.

    >>> round(dice_similarity("hello world", "hello wrld"), 4)
    0.8235
    >>> dice_similarity("", "")
    1.0
    >>> dice_similarity("a", "ab")
    0.0
    """
    first, second = remove_whitespace(a), remove_whitespace(b)
    if first == second:
        return 1.0
    # surrogatepass: a lone surrogate is one code unit in JavaScript too
    encoded_first = first.encode("utf-16-le", "surrogatepass")
    encoded_second = second.encode("utf-16-le", "surrogatepass")
    units_first, units_second = len(encoded_first) // 2, len(encoded_second) // 2
    if units_first < 2 or units_second < 2:
        return 0.0
    if min(units_first, units_second) >= _NUMPY_FROM:
        intersection = _common_large(encoded_first, encoded_second)
    else:
        intersection = _common_small(encoded_first, encoded_second)
    return 2.0 * intersection / (units_first + units_second - 2)
