"""Character- and word-level difference between two texts.

``textual_difference`` computes these measures:

* ``ratio``: ``2·LCS(a, b) / (len(a) + len(b))`` with the character-level longest
  common subsequence; 1 when the texts are equal, 0 when exactly one is empty.
  This is rapidfuzz's ``Indel.normalized_similarity``, computed by a bit-parallel
  algorithm rather than an O(m·n) table. Its cost is bounded (see
  :mod:`~agentevals.scorers._text.bounded`): exact up to two 100 kB texts (or texts within a few
  thousand edits of each other), beyond that a lower bound with ``approximate=True``.
* ``changes``: a word-level count. Texts that differ only in whitespace count as
  one change; otherwise ``max(words(a), words(b)) - common`` where ``common`` is
  the number of words the two texts share (as a multiset).
* ``length_diff``: ``|len(a) - len(b)| / max(len(a), len(b))`` (0 for two empty
  texts), and ``confidence = 1 - length_diff``.

Lengths count UTF-16 code units, as in JavaScript, so the numbers agree with a
JavaScript implementation's exactly even for text with emoji. Case and whitespace matter.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rapidfuzz.distance import Indel

from agentevals.scorers._text._js import js_words, utf16_units
from agentevals.scorers._text.bounded import bounded_distance


@dataclass(frozen=True, slots=True)
class TextDiff:
    """The measures returned by :func:`textual_difference`."""

    ratio: float
    changes: int
    length_diff: float
    confidence: float
    approximate: bool = False


def _ratio(a: str, b: str) -> tuple[float, bool]:
    if a == b:
        return 1.0, False
    if not a or not b:
        return 0.0, False
    total = len(a) + len(b)
    distance, exact = bounded_distance(Indel.distance, a, b)
    lcs = (total - distance) // 2
    # Same operation order as 2*lcs/total in JavaScript: the float is identical.
    return 2.0 * lcs / total, not exact


def _changes(a: str, b: str) -> int:
    if a == b:
        return 0
    words_a, words_b = js_words(a), js_words(b)
    if words_a == words_b:
        # Only whitespace differs: one change.
        return 1
    if not words_a or not words_b:
        return len(words_a) + len(words_b)
    common = sum((Counter(words_a) & Counter(words_b)).values())
    return max(len(words_a), len(words_b)) - common


def textual_difference(a: str, b: str) -> TextDiff:
    """Compare ``a`` (the reference) with ``b``.

    >>> d = textual_difference("The quick brown fox", "The quick brown fox jumps")
    >>> round(d.ratio, 4), d.changes, round(d.length_diff, 2), round(d.confidence, 2)
    (0.8636, 1, 0.24, 0.76)
    """
    units_a, units_b = utf16_units(a), utf16_units(b)
    longest = max(len(units_a), len(units_b))
    length_diff = abs(len(units_a) - len(units_b)) / longest if longest else 0.0
    ratio, approximate = _ratio(units_a, units_b)
    return TextDiff(
        ratio=ratio,
        changes=_changes(a, b),
        length_diff=length_diff,
        confidence=1 - length_diff,
        approximate=approximate,
    )
