"""run_evals and skipped records: an item without the input a scorer needs is skipped, not an error."""

from __future__ import annotations

from agentevals import run_evals
from agentevals.results import ScoreSkipped
from agentevals.scorers import create_exact_match_scorer


def test_items_without_ground_truth_are_skipped_and_stay_out_of_the_mean_and_the_errors() -> None:
    data = [
        {"input": "a", "ground_truth": "A"},
        {"input": "b", "ground_truth": "x"},
        {"input": "c"},  # no ground truth: skipped
    ]
    result = run_evals(
        data=data,
        scorers=[create_exact_match_scorer()],
        target=str.upper,
        thresholds={"exact_match": 0.5},
        progress=False,
    )
    stats = result.stats["exact_match"]
    assert (stats.count, stats.errors, stats.skipped) == (2, 0, 1)
    assert stats.mean == 0.5 and stats.pass_rate == 0.5 and stats.passed
    assert result.summary.scorer_errors == 0 and result.summary.errored_runs == 0
    skipped = result.items[2].results["exact_match"]
    assert isinstance(skipped, ScoreSkipped) and skipped.skip_reason == "no_ground_truth"
    assert result.items[2].passed and result.items[2].scores == {"exact_match": None}
    assert result.verdict == "passed"


def test_a_gate_ignores_skipped_items() -> None:
    result = run_evals(
        data=[{"input": "a", "ground_truth": "A"}, {"input": "b"}],
        scorers=[],
        target=str.upper,
        gates=[create_exact_match_scorer()],
        progress=False,
    )
    assert result.verdict == "passed", result.failed_thresholds
