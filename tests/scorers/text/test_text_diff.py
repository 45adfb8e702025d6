"""textual_difference: ratio (2·LCS/total), word changes, length difference, confidence."""

from __future__ import annotations

import dataclasses

import pytest

from agentevals.scorers._text import TextDiff, textual_difference


def test_identical_texts() -> None:
    assert textual_difference("The quick brown fox", "The quick brown fox") == TextDiff(
        ratio=1.0, changes=0, length_diff=0.0, confidence=1.0
    )


# Mastra's own test inputs, with the exact ratios @mastra/evals 1.10.2 returned under node 20.
MASTRA_CASES = [
    ("The quick brown fox", "The quick brown cat", 0.8421052631578947, 1),
    ("The quick brown fox", "The very quick brown fox", 0.8837209302325582, 1),
    ("The quick brown fox jumps", "The quick fox jumps", 0.8636363636363636, 1),
    (
        "The quick brown fox jumps over the lazy dog",
        "The slow black fox runs under the active cat",
        0.5287356321839081,
        6,  # 9 words each, 3 shared (The, fox, the)
    ),
    ("The quick brown fox", "Lorem ipsum dolor sit amet", 0.26666666666666666, 5),
    ("The Quick Brown Fox", "the quick brown fox", 0.7894736842105263, 4),  # case-sensitive
    ("The   quick\nbrown    fox", "The quick brown fox", 0.8372093023255814, 1),  # whitespace only
]


@pytest.mark.parametrize(("a", "b", "ratio", "changes"), MASTRA_CASES)
def test_mastra_cases(a: str, b: str, ratio: float, changes: int) -> None:
    diff = textual_difference(a, b)
    assert diff.ratio == ratio
    assert diff.changes == changes


def test_empty_texts() -> None:
    assert textual_difference("", "") == TextDiff(1.0, 0, 0.0, 1.0)
    one_empty = textual_difference("The quick brown fox", "")
    assert one_empty == TextDiff(ratio=0.0, changes=4, length_diff=1.0, confidence=0.0)
    assert textual_difference("", "a b").changes == 2


def test_hand_computed_values() -> None:
    # LCS("abcd", "abd") = 3 → 2*3/7; one word each, different → 1 change; |4-3|/4
    diff = textual_difference("abcd", "abd")
    assert diff == TextDiff(ratio=6 / 7, changes=1, length_diff=0.25, confidence=0.75)
    # words: [a, b, b] vs [b, a, c]: shared multiset {a, b} → 3 - 2
    assert textual_difference("a b b", "b a c").changes == 1
    # whitespace-only difference counts as one change even with different spacing amounts
    assert textual_difference(" a  b ", "a b").changes == 1


def test_unicode_lengths_are_utf16_units() -> None:
    # "😀" is two code units in JavaScript: LCS 2 of lengths 2 and 3.
    diff = textual_difference("😀", "😀x")
    assert diff.ratio == 0.8
    assert diff.length_diff == pytest.approx(1 / 3)
    accents = textual_difference("café", "cafe")
    assert accents.ratio == 0.75 and accents.changes == 1


def test_result_is_frozen() -> None:
    diff = textual_difference("a", "b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        diff.ratio = 1.0  # type: ignore[misc]


def test_100_kb_inputs() -> None:
    a = "a" * 100_000
    b = "a" * 50_000 + "b" * 50_000
    diff = textual_difference(a, b)
    assert diff.ratio == 0.5  # LCS = 50,000 of 200,000 characters in total
    assert diff.length_diff == 0.0 and diff.changes == 1
    words = "alpha beta " * 9_000  # ~100 kB, 18,000 words
    shorter = textual_difference(words, words.replace("beta", "gamma", 1))
    assert shorter.changes == 1
    # Everything but "beta"/"gamma" is common, and those two share one "a".
    assert shorter.ratio == 2 * (len(words) - 3) / (2 * len(words) + 1)
