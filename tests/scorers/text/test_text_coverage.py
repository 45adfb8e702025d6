"""coverage / missing_elements: Mastra's fuzzy rule, checked against a brute-force transcription."""

from __future__ import annotations

import random

import pytest

from agentevals.scorers._text import coverage, missing_elements


def _covered(element: str, outputs: list[str]) -> bool:
    for s in outputs:
        if len(element) <= 3:
            if element == s:
                return True
            continue
        longer, shorter = (element, s) if len(element) > len(s) else (s, element)
        if shorter in longer and len(shorter) / len(longer) > 0.6:
            return True
    return False


def _reference(inputs: list[str], outputs: list[str]) -> float:
    if not inputs:
        return 1.0 if not outputs else 0.0
    return sum(_covered(e, outputs) for e in inputs) / len(inputs)


def test_fuzzy_rule() -> None:
    assert coverage(["cats"], ["cat"]) == 1.0  # 3/4 > 0.6
    assert coverage(["cat"], ["cats"]) == 0.0  # three characters or fewer: exact only
    assert coverage(["running"], ["run"]) == 0.0  # 3/7 is not > 0.6
    assert coverage(["paper"], ["newspaper"]) == 0.0  # 5/9
    assert coverage(["paper"], ["papers"]) == 1.0  # 5/6
    assert coverage(["abcde"], ["abc"]) == 0.0  # 3/5 == 0.6 is not > 0.6
    assert coverage(["abcdefghij"], ["bcdefgh"]) == 1.0  # 7/10, contained


def test_empty_lists() -> None:
    assert coverage([], []) == 1.0
    assert coverage([], ["x"]) == 0.0
    assert coverage(["x"], []) == 0.0
    assert missing_elements([], ["x"]) == []


def test_missing_is_consistent_with_the_score() -> None:
    inputs = ["the", "cats", "sat", "mat", "lazy"]
    outputs = ["cat", "sat", "mats"]
    missing = missing_elements(inputs, outputs)
    assert missing == ["the", "mat", "lazy"]
    assert coverage(inputs, outputs) == 1 - len(missing) / len(inputs) == 0.4


def test_matches_brute_force_on_random_elements() -> None:
    rng = random.Random(11)
    alphabet = "abcab"
    for _ in range(400):
        inputs = ["".join(rng.choices(alphabet, k=rng.randint(1, 9))) for _ in range(rng.randint(0, 6))]
        outputs = ["".join(rng.choices(alphabet, k=rng.randint(1, 9))) for _ in range(rng.randint(0, 6))]
        assert coverage(inputs, outputs) == _reference(inputs, outputs), (inputs, outputs)


@pytest.mark.parametrize("size", [60, 200, 5_000])
def test_long_elements_use_the_same_rule(size: int) -> None:
    long = "x" * size
    assert coverage([long], [long[: int(size * 0.7)]]) == 1.0
    assert coverage([long[: int(size * 0.7)]], [long]) == 1.0
    assert coverage([long], [long[: int(size * 0.5)]]) == 0.0
    assert coverage([long[: int(size * 0.5)]], [long]) == 0.0


def test_100_kb_of_elements() -> None:
    inputs = [f"w{i:05d}x" for i in range(14_000)]  # ~100 kB of elements
    outputs = [f"w{i:05d}xs" for i in range(0, 14_000, 2)]  # covers every other input
    assert coverage(inputs, outputs) == 0.5
    assert coverage(["y" * 100_000], ["y" * 70_000]) == 1.0
