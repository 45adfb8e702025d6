"""assert_scores: a CI gate whose failure message shows the failing items, their scores and reasons."""

from __future__ import annotations

import pytest

from agentevals import EvalResult, create_scorer, run_evals
from agentevals.scorers import create_exact_match_scorer
from agentevals.testing import assert_scores

DATA = [
    {"input": "a", "ground_truth": "A"},
    {"input": "b", "ground_truth": "B"},
    {"input": "c", "ground_truth": "not C"},
]


def _result(**kwargs: object) -> EvalResult:
    return run_evals(DATA, [create_exact_match_scorer()], str.upper, progress=False, **kwargs)  # type: ignore[arg-type]


def test_passes_when_the_mean_meets_the_minimum() -> None:
    assert_scores(_result(), min_score={"exact_match": 0.6})
    assert_scores(_result(), max_score={"exact_match": 0.7})


def test_failure_lists_the_failing_items_with_inputs_scores_and_reasons() -> None:
    with pytest.raises(AssertionError) as info:
        assert_scores(_result(), min_score={"exact_match": 0.9})
    message = str(info.value)
    assert "exact_match: mean 0.667 is not >= 0.9" in message
    assert "[2] input='c' output='C'" in message
    assert "exact_match: 0.000 - Expected 'not C', got 'C'" in message
    assert "input='a'" not in message  # passing items are not listed


def test_per_item_bounds_every_item() -> None:
    with pytest.raises(AssertionError, match=r"exact_match: 1 item\(s\) scored outside >= 0.5"):
        assert_scores(_result(), min_score={"exact_match": 0.5}, per_item=True)


def test_without_bounds_the_runs_own_thresholds_decide() -> None:
    assert_scores(_result(thresholds={"exact_match": 0.5}))
    with pytest.raises(AssertionError, match=r"exact_match: mean 0.667 is not >= 0.8"):
        assert_scores(_result(thresholds={"exact_match": 0.8}))


def test_errored_items_fail_unless_allowed() -> None:
    def picky(run: object, **_: object) -> float:
        raise ValueError("judge said no")

    result = run_evals(
        DATA[:1],
        [create_scorer(id="picky").generate_score(picky), create_exact_match_scorer()],
        str.upper,
        progress=False,
    )
    with pytest.raises(AssertionError) as info:
        assert_scores(result, min_score={"exact_match": 1.0})
    assert "1 item run(s) errored" in str(info.value)
    assert "picky: error ValueError: judge said no" in str(info.value)
    assert_scores(result, min_score={"exact_match": 1.0}, allow_errors=True)


def test_unknown_scorer_ids_are_a_usage_error() -> None:
    with pytest.raises(ValueError, match=r"unknown scorer id\(s\) \['nope'\]"):
        assert_scores(_result(), min_score={"nope": 1.0})
