"""Large inputs stay (near) linear: counted work, never wall-clock time (bench_scorer_scaling.py times it)."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from rapidfuzz.distance import Indel, Levenshtein

from agentevals.scorers._text import bounded as bounded_module
from agentevals.scorers._text import sentence_split, sentiment, textual_difference
from agentevals.scorers._text.bounded import bounded_distance

_REFERENCE_SENTENCE = re.compile(r"[^.!?]+[.!?]+")


def test_sentence_split_is_unchanged() -> None:
    rng = random.Random(0)
    for _ in range(5000):
        text = "".join(rng.choice("ab .!?\n") for _ in range(rng.randint(0, 14)))
        assert sentence_split(text) == (_REFERENCE_SENTENCE.findall(text) or [text])


class _CountingPattern:
    """Wraps the sentence regex and records how many characters each findall may scan."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.scanned = pattern, 0

    def findall(self, text: str, pos: int = 0, endpos: int | None = None) -> list[Any]:
        self.scanned += (len(text) if endpos is None else endpos) - pos
        return self.pattern.findall(text, pos, len(text) if endpos is None else endpos)


def test_sentence_split_never_scans_text_after_the_last_terminator(monkeypatch: pytest.MonkeyPatch) -> None:
    # [^.!?]+[.!?]+ on a long text without a terminator backtracks quadratically (50 kB ~ 13 s)
    counting = _CountingPattern(sentiment._SENTENCE)
    monkeypatch.setattr(sentiment, "_SENTENCE", counting)
    text = "word " * 2_000
    assert sentence_split(text) == [text]
    assert sentence_split("One. Two! " + text) == ["One.", " Two!"]
    assert counting.scanned == len("One. Two!")


class _CountingDistance:
    """A rapidfuzz distance that counts the character pairs each call may compare."""

    def __init__(self, distance: Any) -> None:
        self.distance, self.pairs = distance, 0

    def __call__(self, a: str, b: str, *, score_cutoff: int | None = None) -> int:
        longest = max(len(a), len(b))
        self.pairs += len(a) * len(b) if score_cutoff is None else longest * (2 * score_cutoff + 1)
        result: int = self.distance(a, b, score_cutoff=score_cutoff)
        return result


@pytest.mark.parametrize("distance", [Indel.distance, Levenshtein.distance])
def test_bounded_distance_work_is_bounded(distance: Any) -> None:
    rng = random.Random(1)
    a = "".join(rng.choice("abcd ") for _ in range(20_000))
    b = "".join(rng.choice("abcd ") for _ in range(30_000))
    limit = 1_000_000
    counting = _CountingDistance(distance)
    found, exact = bounded_distance(counting, a, b, limit)
    assert not exact
    assert counting.pairs <= 4 * limit  # vs 600,000,000 pairs for the exact distance
    assert found >= distance(a, b)  # an upper bound: the similarity is never overstated


@pytest.mark.parametrize("distance", [Indel.distance, Levenshtein.distance])
def test_bounded_distance_is_exact_on_normal_and_near_equal_inputs(distance: Any) -> None:
    rng = random.Random(2)
    a = "".join(rng.choice("abcd ") for _ in range(3_000))
    b = "".join(rng.choice("abcd ") for _ in range(3_000))
    assert bounded_distance(distance, a, b) == (distance(a, b), True)
    near = a[:1500] + "xyz" + a[1500:]
    assert bounded_distance(distance, a * 20, near * 20, 10_000_000) == (distance(a * 20, near * 20), True)


def test_textual_difference_on_one_megabyte_counts_bounded_work(monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _CountingDistance(Indel.distance)
    monkeypatch.setattr("agentevals.scorers._text.diff.Indel", type("I", (), {"distance": counting}))
    rng = random.Random(3)
    a = "".join(rng.choice("abcd ") for _ in range(1_000_000))
    b = "".join(rng.choice("abcd ") for _ in range(1_000_000))
    diff = textual_difference(a, b)
    assert diff.approximate and 0 < diff.ratio < 1
    assert counting.pairs <= 4 * bounded_module.EXACT_LIMIT  # the exact LCS: 10**12 pairs
