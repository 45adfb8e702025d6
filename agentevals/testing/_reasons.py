"""Reason texts for ``schema_responder`` that agree with the verdicts and scores they explain.

A reason step asks "why the score is S (out of M)": the reply explains S in S's direction. A reason field
of a structured reply restates its sibling verdicts ("It is not supported") and leans the way its
booleans and scores lean, so a 0.0 never comes with praise.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

HIGH = 0.7
"""A share of the scale (or of passing checks) at or above this reads as positive."""
LOW = 0.4
"""A share at or below this reads as negative; in between, as mixed."""

_SCORE = re.compile(r"(?:score is|scored) (-?\d+(?:\.\d+)?)\s*\(out of\s+(\d+(?:\.\d+)?)")
_MEASURES = re.compile(r"higher (?:means|is) more ([a-z]+)")
_VERBS = ("is", "was", "has", "had", "does", "did")
_NEUTRAL = (
    "The answer was read against the question and the information given.",
    "The judgement rests on the question and the information given.",
)


def score_reason(prompt: str) -> str | None:
    """The explanation a reason step asks for, in the direction of its score; None without a score."""
    match = _SCORE.search(prompt)
    if match is None:
        return None
    score, scale = float(match[1]), float(match[2])
    share = score / scale if scale > 0 else 0.0
    measured = _MEASURES.search(prompt)
    return f"The score is {match[1]} because {_because(share, measured[1] if measured else None)}."


def neutral_sentence(rng: random.Random) -> str:
    """A sentence for a text request that asks no score to be explained (it takes no side)."""
    return rng.choice(_NEUTRAL)


def verdict_reason(verdicts: Sequence[tuple[str, Any]], share: float | None) -> str:
    """A reason restating ``verdicts`` (sibling name and value), leaning as ``share`` of checks passed."""
    clauses = [_clause(name, value) for name, value in verdicts]
    if not clauses:
        return _overall(share)
    text = " and ".join(clauses)
    text = text[0].upper() + text[1:]
    if share is None:
        return f"{text}, judged from the text given."
    if share >= HIGH:
        return f"{text}: the text bears this out."
    if share <= LOW:
        return f"{text}: the text falls short here."
    return f"{text}: a mixed picture."


def _because(share: float, measured: str | None) -> str:
    if measured is not None:
        if share >= HIGH:
            return f"most of the judged parts are {measured}"
        if share <= LOW:
            return f"few or none of the judged parts are {measured}"
        return f"some of the judged parts are {measured} and some are not"
    if share >= HIGH:
        return "the answer meets the criterion: the judged parts hold up"
    if share <= LOW:
        return "the answer falls short of the criterion: few or none of the judged parts pass"
    return "the answer is mixed against the criterion: some judged parts pass and some do not"


def _overall(share: float | None) -> str:
    if share is None:
        return "This follows from the texts compared."
    if share >= HIGH:
        return "Overall the response holds up: most checks pass."
    if share <= LOW:
        return "Overall the response falls short: most checks fail."
    return "Overall a mixed result: some checks pass and some do not."


def _clause(name: str, value: Any) -> str:
    words = name.split("_")
    if isinstance(value, bool):
        if words[0] in _VERBS and len(words) > 1:
            verb, rest = words[0], " ".join(words[1:])
        elif name.endswith("ed"):  # a participle: "supported", "answered"
            verb, rest = "is", " ".join(words)
        else:
            return f"the {' '.join(words)} holds" if value else f"the {' '.join(words)} does not hold"
        return f"it {verb} {rest}" if value else f"it {verb} not {rest}"
    if isinstance(value, str):
        return f'the {" ".join(words)} is "{value}"'
    return f"the {' '.join(words)} is {value}"
