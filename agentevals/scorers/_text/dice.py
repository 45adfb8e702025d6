"""Sørensen–Dice similarity of character bigrams, as JavaScript ``string-similarity``.

``dice_similarity`` reproduces ``compareTwoStrings`` from the npm package
``string-similarity`` 4.0.4 (the function Mastra's content-similarity scorer
calls), including its quirks: all whitespace is removed first, the comparison is
case-sensitive, bigrams are counted as a multiset, and lengths are UTF-16 code
units (an emoji counts as two characters).
"""

from __future__ import annotations

from collections import Counter
from operator import add

from agentevals.scorers._text._js import WHITESPACE_RUN, utf16_units


def _bigrams(text: str) -> Counter[str]:
    # map(add, s, s[1:]) builds every two-character slice at C speed.
    return Counter(map(add, text, text[1:]))


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
    first = utf16_units(WHITESPACE_RUN.sub("", a))
    second = utf16_units(WHITESPACE_RUN.sub("", b))
    if first == second:
        return 1.0
    if len(first) < 2 or len(second) < 2:
        return 0.0
    small, large = _bigrams(first), _bigrams(second)
    if len(small) > len(large):
        small, large = large, small
    # Counter returns 0 for a missing key without inserting it.
    intersection = sum(min(count, large[bigram]) for bigram, count in small.items())
    return 2.0 * intersection / (len(first) + len(second) - 2)
