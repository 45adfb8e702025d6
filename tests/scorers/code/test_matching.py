"""The deepagents deterministic scorers: Python twins of the seed's examples and edge cases."""

from __future__ import annotations

import re
from typing import Any

import pytest

from agentevals import Run, Scorer, ScorerError
from agentevals._model._failure import error_record
from agentevals.errors import ScorerSkipped
from agentevals.results import ScoreSkipped
from agentevals.scorers import (
    create_exact_match_scorer,
    create_includes_scorer,
    create_json_match_scorer,
    create_levenshtein_scorer,
    create_regex_scorer,
)


def test_seed_exact_match() -> None:
    assert (
        create_exact_match_scorer().run_sync(input="What is 2+2?", output="4", ground_truth="4").score == 1.0
    )
    miss = create_exact_match_scorer().run_sync(input="What is 2+2?", output="four", ground_truth="4")
    assert miss.score == 0.0 and miss.reason == "Expected '4', got 'four'"
    assert create_exact_match_scorer().run_sync(output="4", ground_truth=4).score == 1.0  # String(expected)


def test_seed_includes() -> None:
    result = create_includes_scorer().run_sync(
        input="What is the capital of France?", output="The capital of France is Paris.", ground_truth="Paris"
    )
    assert result.score == 1.0
    assert create_includes_scorer().run_sync(output="Lyon", ground_truth="Paris").score == 0.0


def test_seed_regex() -> None:
    email = create_regex_scorer(re.compile(r"^[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}$", re.IGNORECASE))
    assert email.run_sync(input="Extract the email", output="Ada@Example.com").score == 1.0
    assert email.run_sync(input="Extract the email", output="not an email").score == 0.0
    with pytest.raises(re.error):
        create_regex_scorer("(unclosed")


def test_seed_levenshtein() -> None:
    result = create_levenshtein_scorer().run_sync(input='Spell "hello"', output="helo", ground_truth="hello")
    assert result.score == pytest.approx(0.8)
    assert result.analyze_step_result == {"distance": 1, "similarity": pytest.approx(0.8)}
    assert create_levenshtein_scorer().run_sync(output="", ground_truth="").score == 1.0
    assert create_levenshtein_scorer().run_sync(output="abc", ground_truth="xyz").score == 0.0
    assert create_levenshtein_scorer().run_sync(
        output="kitten", ground_truth="sitting"
    ).score == pytest.approx(0.5714, abs=1e-4)


def test_seed_json_match() -> None:
    run = {"input": "Generate JSON", "output": '{"name":"Alice","age":30}'}
    assert create_json_match_scorer().run_sync(**run, ground_truth={"name": "Alice", "age": 30}).score == 1.0
    assert (
        create_json_match_scorer().run_sync(**run, ground_truth='{"age": 30, "name": "Alice"}').score == 1.0
    )  # key order
    assert (
        create_json_match_scorer().run_sync(output="[1, 2]", ground_truth=[2, 1]).score == 0.0
    )  # array order kept
    assert create_json_match_scorer().run_sync(output='{"a": 1.0}', ground_truth={"a": 1}).score == 1.0
    assert create_json_match_scorer().run_sync(output='{"a": true}', ground_truth={"a": 1}).score == 0.0
    invalid = create_json_match_scorer().run_sync(output="{oops", ground_truth={"a": 1})
    assert invalid.score == 0.0 and invalid.reason is not None and "not valid JSON" in invalid.reason


@pytest.mark.parametrize(
    ("output", "expected", "where"),
    [
        ('{"a": {"b": [1, 2]}}', {"a": {"b": [1, 3]}}, "$.a.b[1] is 2, expected 3"),
        ('{"a": true}', {"a": 1}, "$.a is true, expected 1"),
        ('{"a": 1, "c": 0}', {"a": 1, "b": 0}, "$ has missing keys ['b'] and unexpected keys ['c']"),
        ("[1]", [1, 2], "$ has 1 items, expected 2"),
    ],
)
def test_json_match_reason_names_where_the_structures_differ(output: str, expected: Any, where: str) -> None:
    result = create_json_match_scorer().run_sync(output=output, ground_truth=expected)
    assert result.score == 0.0 and result.reason == f"JSON structures differ: {where}"


def test_missing_ground_truth_is_a_clear_error() -> None:
    for scorer in (
        create_exact_match_scorer(),
        create_includes_scorer(),
        create_levenshtein_scorer(),
        create_json_match_scorer(),
    ):
        with pytest.raises(ScorerError, match="ground_truth"):
            scorer.run_sync(output="x")


def test_unicode_and_long_inputs() -> None:
    assert create_exact_match_scorer().run_sync(output="café ☕", ground_truth="café ☕").score == 1.0
    long = "a" * 100_000
    assert create_levenshtein_scorer().run_sync(
        output=long, ground_truth=long[:-1] + "b"
    ).score == pytest.approx(1 - 1 / 100_000)


@pytest.mark.parametrize(
    "scorer",
    [
        create_exact_match_scorer(),
        create_includes_scorer(),
        create_levenshtein_scorer(),
        create_regex_scorer("a"),
        create_json_match_scorer(),
    ],
    ids=lambda s: s.id,
)
def test_no_output_skips_the_run_as_the_other_output_scorers_do(scorer: Scorer) -> None:
    run = Run(input="q", output=None, ground_truth="x")
    with pytest.raises(ScorerSkipped) as raised:
        scorer.run_sync(run)
    assert raised.value.skip_reason == "no_output"
    assert "run.output is None" in raised.value.message
    record = error_record(scorer=scorer, run=run, error=raised.value)
    assert isinstance(record, ScoreSkipped) and record.skip_reason == "no_output"
