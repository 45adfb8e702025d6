"""Fuzzy coverage of one element list by another (the completeness scorer's rule).

An input element ``e`` is *covered* by the output elements when some output
element ``s`` satisfies:

* ``len(e) <= 3``: ``e == s``;
* otherwise: the longer of the two contains the shorter and
  ``len(shorter) / len(longer) > 0.6`` (``cats``/``cat`` → 0.75, covered).

Rather than comparing every input element with every output element, the output
elements are indexed once (by value, by length, and by their long substrings), so
each input element costs a handful of set lookups and 100 kB texts stay fast.
Elements are compared as given; :func:`~agentevals.scorers._text.elements.extract_elements`
already normalizes them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

# Elements longer than this are matched by scanning candidates of the right
# length instead of enumerating their substrings (which grows quadratically).
_ENUMERATE_LIMIT = 48


def _close(shorter: int, longer: int) -> bool:
    # A float division and a strict comparison, as JavaScript computes it: a ratio of exactly 0.6 fails.
    return shorter / longer > 0.6


class _OutputIndex:
    def __init__(self, outputs: Sequence[str]) -> None:
        self.exact = frozenset(outputs)
        self.by_length: dict[int, list[str]] = defaultdict(list)
        # Substrings t of a short output s with len(t) >= 4 and len(t)/len(s) > 0.6:
        # an input element equal to t is covered by s.
        self.inside: set[str] = set()
        for element in self.exact:
            size = len(element)
            self.by_length[size].append(element)
            if size > _ENUMERATE_LIMIT:
                continue
            for width in range(size - 1, 3, -1):
                if not _close(width, size):
                    break
                for start in range(size - width + 1):
                    self.inside.add(element[start : start + width])
        self.long_outputs = [e for e in self.exact if len(e) > _ENUMERATE_LIMIT]

    def covers(self, element: str) -> bool:
        if element in self.exact:
            return True
        size = len(element)
        if size <= 3:
            return False
        if element in self.inside or self._inside_long_output(element):
            return True
        return self._contains_output(element)

    def _inside_long_output(self, element: str) -> bool:
        size = len(element)
        return any(len(s) > size and _close(size, len(s)) and element in s for s in self.long_outputs)

    def _contains_output(self, element: str) -> bool:
        size = len(element)
        if size <= _ENUMERATE_LIMIT:
            for width in range(size - 1, 0, -1):
                if not _close(width, size):
                    return False
                for start in range(size - width + 1):
                    if element[start : start + width] in self.exact:
                        return True
            return False
        for width in range(size - 1, 0, -1):
            if not _close(width, size):
                return False
            if any(s in element for s in self.by_length.get(width, ())):
                return True
        return False


def missing_elements(input_elements: Sequence[str], output_elements: Sequence[str]) -> list[str]:
    """The input elements that no output element covers, in input order.

    The list is consistent with the score (an element with a close but not exact
    match is covered, so not missing): ``coverage == 1 - len(missing) / len(input_elements)``.

    >>> missing_elements(["cats", "dog", "sat"], ["cat", "dogs", "sat"])
    ['dog']
    """
    index = _OutputIndex(output_elements)
    return [element for element in input_elements if not index.covers(element)]


def coverage(input_elements: Sequence[str], output_elements: Sequence[str]) -> float:
    """Fraction of ``input_elements`` covered by ``output_elements``.

    With no input elements the score is 1 if there are no output elements
    either, else 0.

    >>> coverage(["cats", "dog", "sat"], ["cat", "dogs", "sat"])
    0.6666666666666666
    >>> coverage([], []), coverage([], ["x"])
    (1.0, 0.0)
    """
    if not input_elements:
        return 0.0 if output_elements else 1.0
    covered = len(input_elements) - len(missing_elements(input_elements, output_elements))
    return covered / len(input_elements)
