"""Prebuilt scorers. Each is a :class:`~agentevals.Scorer` like any other."""

from agentevals.scorers._combinators import all_of, any_of, weighted
from agentevals.scorers._factuality import factuality
from agentevals.scorers._matching import exact_match, includes, json_match, levenshtein, regex

__all__ = [
    "all_of",
    "any_of",
    "exact_match",
    "factuality",
    "includes",
    "json_match",
    "levenshtein",
    "regex",
    "weighted",
]
