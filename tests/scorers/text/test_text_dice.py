"""dice_similarity: string-similarity 4.0.4 ``compareTwoStrings`` semantics."""

from __future__ import annotations

import random
import string

import pytest

from agentevals.scorers._text import dice_similarity


def _reference(a: str, b: str) -> float:
    """A literal, slow transcription of the published algorithm (BMP text only)."""
    a, b = "".join(a.split()), "".join(b.split())
    if a == b:
        return 1.0
    if len(a) < 2 or len(b) < 2:
        return 0.0
    pool = [a[i : i + 2] for i in range(len(a) - 1)]
    hits = 0
    for i in range(len(b) - 1):
        if b[i : i + 2] in pool:
            pool.remove(b[i : i + 2])
            hits += 1
    return 2.0 * hits / (len(a) + len(b) - 2)


# library-facts §5: (pair, Dice as in JS, Dice after lower-casing both)
LIBRARY_FACTS = [
    ("hello world", "hello wrld", 0.8235, 0.8235),
    ("The cat sat on the mat.", "The cat sat on a mat", 0.7742, 0.7742),
    ("Paris is the capital of France", "The capital of France is Paris", 0.8750, 0.9167),
    ("kitten", "sitting", 0.3636, 0.3636),
    ("Night", "nacht", 0.2500, 0.2500),
]


@pytest.mark.parametrize(("a", "b", "dice", "dice_lower"), LIBRARY_FACTS)
def test_library_facts_table(a: str, b: str, dice: float, dice_lower: float) -> None:
    assert dice_similarity(a, b) == pytest.approx(dice, abs=5e-5)
    assert dice_similarity(a.lower(), b.lower()) == pytest.approx(dice_lower, abs=5e-5)


def test_hand_computed_values() -> None:
    # night/nacht: {ni, ig, gh, ht} vs {na, ac, ch, ht} share one bigram: 2*1/(5+5-2)
    assert dice_similarity("night", "nacht") == 0.25
    # bigrams are a multiset: "aaaa" has aa×3, "aa" has aa×1 → 2*1/(4+2-2)
    assert dice_similarity("aaaa", "aa") == 0.5
    # café/cafe share ca, af: 2*2/(4+4-2)
    assert dice_similarity("café", "cafe") == pytest.approx(2 / 3)
    # exact values recorded from string-similarity 4.0.4 under node 20
    assert dice_similarity("the quick brown fox", "the quick brown cat") == 0.8
    assert dice_similarity("the quick brown fox", "a quick brown fox") == 0.8571428571428571


def test_empty_and_short_strings() -> None:
    assert dice_similarity("", "") == 1.0
    assert dice_similarity(" \n\t", "") == 1.0  # whitespace is removed first
    assert dice_similarity("\u00a0", "") == 1.0  # JavaScript \s includes NBSP
    assert dice_similarity("abc", "") == 0.0
    assert dice_similarity("", "abc") == 0.0
    assert dice_similarity("a", "a") == 1.0
    assert dice_similarity("a", "ab") == 0.0
    assert dice_similarity("a", "b") == 0.0


def test_whitespace_removed_and_case_sensitive() -> None:
    assert dice_similarity("ab", "a b ") == 1.0
    assert dice_similarity("The   quick\nbrown fox", "Thequickbrownfox") == 1.0
    assert dice_similarity("AB", "ab") == 0.0


def test_astral_characters_count_as_two_utf16_units() -> None:
    # Recorded from string-similarity under node: an emoji is a surrogate pair in JavaScript.
    assert dice_similarity("😀😀", "😀") == 0.5
    assert dice_similarity("😀x", "😀y") == 0.5


def test_matches_reference_on_random_strings() -> None:
    rng = random.Random(7)
    alphabet = string.ascii_letters[:6] + " é"
    for _ in range(300):
        a = "".join(rng.choices(alphabet, k=rng.randint(0, 12)))
        b = "".join(rng.choices(alphabet, k=rng.randint(0, 12)))
        assert dice_similarity(a, b) == _reference(a, b), (a, b)


def test_100_kb_inputs() -> None:
    a = "abcdefghij" * 10_000
    b = a[:50_000]
    # Every bigram of b also occurs in a at least as often.
    assert dice_similarity(a, b) == 2.0 * 49_999 / (100_000 + 50_000 - 2)
    assert dice_similarity(a, a + " ") == 1.0
