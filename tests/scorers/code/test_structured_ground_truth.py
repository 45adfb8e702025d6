"""Structured outputs and ground truths compare in one canonical form (sorted-key JSON); strings as is."""

from __future__ import annotations

import pytest

from agentevals.scorers import (
    checks,
    create_exact_match_scorer,
    create_includes_scorer,
    create_json_match_scorer,
    create_levenshtein_scorer,
    create_regex_scorer,
)


@pytest.mark.parametrize(
    ("output", "ground_truth"),
    [
        ({"a": 1}, {"a": 1}),
        ({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}),  # key order does not matter
        ({"a": 1}, '{"a": 1}'),  # a dict against an equal JSON string
        ('{"b": 2, "a": 1}', {"a": 1, "b": 2}),
        ([1, 2], [1, 2]),
        ({"a": 1.0}, {"a": 1}),
        (4, "4"),
        ("4", 4),
    ],
)
def test_equal_structured_values_match(output: object, ground_truth: object) -> None:
    run = {"input": "q", "output": output, "ground_truth": ground_truth}
    assert create_exact_match_scorer().run_sync(**run).score == 1.0
    assert create_levenshtein_scorer().run_sync(**run).score == 1.0
    assert create_includes_scorer().run_sync(**run).score == 1.0


def test_different_structured_values_do_not_match() -> None:
    run = {"input": "q", "output": {"a": 1}, "ground_truth": {"a": 2}}
    assert create_exact_match_scorer().run_sync(**run).score == 0.0
    assert create_levenshtein_scorer().run_sync(**run).score < 1.0
    assert create_json_match_scorer().run_sync(**run).score == 0.0


def test_strings_stay_strings() -> None:
    # a plain string ground truth is not JSON-quoted, and two strings compare as they are
    assert create_includes_scorer().run_sync(output="It is Paris.", ground_truth="Paris").score == 1.0
    assert create_exact_match_scorer().run_sync(output='{"a":1}', ground_truth='{"a": 1}').score == 0.0
    assert create_levenshtein_scorer().run_sync(output="hello", ground_truth="hallo").score == 0.8


def test_includes_finds_structured_ground_truth_in_structured_output() -> None:
    run = {"output": {"outer": {"b": 2, "a": 1}}, "ground_truth": {"a": 1, "b": 2}}
    assert create_includes_scorer().run_sync(**run).score == 1.0


def test_regex_reads_structured_output_with_sorted_keys() -> None:
    assert create_regex_scorer(r'^\{"a": 1, "b": 2\}$').run_sync(output={"b": 2, "a": 1}).score == 1.0


def test_json_match_structured_output() -> None:
    scorer = create_json_match_scorer()
    assert scorer.run_sync(output={"b": 2, "a": 1}, ground_truth='{"a": 1, "b": 2}').score == 1.0
    assert scorer.run_sync(output=(1, 2), ground_truth=[1, 2]).score == 1.0


@pytest.mark.parametrize("value", [[], {}, 0, False, "null", "[]", "{}", "0", "false"])
def test_json_match_accepts_every_json_value(value: object) -> None:
    result = create_json_match_scorer().run_sync(input="q", output=value, ground_truth=value)
    assert result.score == 1.0, result.reason


def test_json_match_empty_array_differs_from_empty_object() -> None:
    result = create_json_match_scorer().run_sync(output=[], ground_truth={})
    assert result.score == 0.0 and result.reason == "JSON structures differ: $ is [], expected {}"


def test_checks_compare_structured_targets_canonically() -> None:
    assert checks.equals({"a": 1, "b": 2}).run_sync(input="q", output={"b": 2, "a": 1}).score == 1.0
    assert checks.equals({"a": 1}).run_sync(input="q", output='{"a": 1}').score == 1.0
    assert checks.includes({"a": 1}).run_sync(input="q", output={"x": {"a": 1}}).score == 1.0
    assert checks.excludes({"a": 1}).run_sync(input="q", output={"x": {"a": 1}}).score == 0.0
    assert checks.similarity({"a": 1}).run_sync(input="q", output={"a": 1}).score == 1.0
    assert checks.equals("Paris").run_sync(input="q", output="paris").score == 1.0  # strings unchanged
