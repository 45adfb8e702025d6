"""compare_trajectories: Mastra's results where we agree (recorded), and the corrected cases."""

from __future__ import annotations

from typing import Any

import pytest

from agentevals.scorers import Trajectory, compare_trajectories
from agentevals.scorers.trajectory._model import ExpectedStep, expectation_from


def _traj(*steps: Any) -> Trajectory:
    return Trajectory.model_validate([{"name": s} if isinstance(s, str) else s for s in steps])


def _exp(*steps: Any) -> list[ExpectedStep]:
    expectation = expectation_from(list(steps))
    assert expectation is not None and expectation.steps is not None
    return expectation.steps


def test_relaxed_allows_extra_steps() -> None:
    result = compare_trajectories(_traj("search", "log", "summarize"), _exp("search", "summarize"))
    assert (result.score, result.matched_steps, result.extra_steps) == (1.0, 2, ["log"])


def test_strict_penalizes_extra_and_swapped_steps() -> None:
    extra = compare_trajectories(_traj("a", "b", "c"), _exp("a", "b"), ordering="strict")
    assert (extra.score, extra.extra_steps) == (0.75, ["c"])  # 1 - 0.5 * 1/2, as Mastra
    swapped = compare_trajectories(_traj("b", "a"), _exp("a", "b"), ordering="strict")
    assert (swapped.score, swapped.out_of_order_steps, swapped.missing_steps) == (0.0, ["b", "a"], ["a", "b"])


def test_unordered_and_superset() -> None:
    for ordering in ("unordered", "superset"):
        result = compare_trajectories(_traj("b", "a", "c"), _exp("a", "b", "d"), ordering=ordering)  # type: ignore[arg-type]
        assert (result.score, result.missing_steps, result.extra_steps) == (0.67, ["d"], ["c"])


def test_subset_scores_steps_outside_the_plan() -> None:
    result = compare_trajectories(_traj("a", "x", "b", "y"), _exp("a", "b", "c"), ordering="subset")
    assert result.score == 0.5  # 2 of 4 actual steps were planned
    assert compare_trajectories(_traj(), _exp("a"), ordering="subset").score == 1.0
    assert compare_trajectories(_traj("a"), _exp("a", "b"), ordering="subset").score == 1.0


def test_repeated_steps_penalty() -> None:
    result = compare_trajectories(_traj("a", "a", "b"), _exp("a", "b"), allow_repeated_steps=False)
    assert (result.score, result.repeated_steps) == (0.9, ["a"])
    assert compare_trajectories(_traj("a", "a", "b"), _exp("a", "b")).score == 1.0


def test_empty_expectation() -> None:
    assert compare_trajectories(_traj(), []).score == 1.0
    result = compare_trajectories(_traj("a"), [])
    assert (result.score, result.extra_steps) == (0.0, ["a"])


def test_relaxed_finds_the_longest_in_order_match() -> None:
    # Mastra matches greedily and scores 0.33 (recorded): X first, then nothing after it.
    result = compare_trajectories(_traj("A", "B", "X"), _exp("X", "A", "B"))
    assert (result.score, result.missing_steps, result.out_of_order_steps) == (0.67, ["X"], ["X"])


def test_unordered_uses_a_maximum_matching() -> None:
    actual = _traj({"name": "get", "tool_args": {"id": 1}}, {"name": "get", "tool_args": {"id": 2}})
    # The unconstrained expected step must not take the only call the specific one can match.
    expected = _exp({"name": "get"}, {"name": "get", "tool_args": {"id": 1}})
    assert compare_trajectories(actual, expected, ordering="unordered").score == 1.0


def test_step_data_and_argument_matching() -> None:
    actual = _traj({"name": "a", "tool_args": {"x": 1, "y": 2}, "success": True})
    exact = _exp({"name": "a", "step_type": "tool_call", "tool_args": {"x": 1}})
    assert compare_trajectories(actual, exact).score == 0.0  # recorded Mastra result too
    assert compare_trajectories(actual, exact, tool_args_match="superset").score == 1.0
    assert compare_trajectories(actual, exact, tool_args_match="subset").score == 0.0
    assert compare_trajectories(actual, exact, tool_args_match="ignore").score == 1.0
    # Step data is compared even without step_type (Mastra skips it then).
    assert compare_trajectories(actual, _exp({"name": "a", "tool_args": {"x": 9}})).score == 0.0
    assert compare_trajectories(actual, _exp({"name": "a", "success": False})).score == 0.0
    assert compare_trajectories(actual, _exp({"name": "a", "step_type": "model_generation"})).score == 0.0
    assert compare_trajectories(actual, _exp({"name": "a", "tool_args": {"y": 2, "x": 1}})).score == 1.0


@pytest.mark.parametrize("ordering", ["strict", "relaxed", "unordered", "subset"])
def test_identical_long_trajectories(ordering: str) -> None:
    names = [f"step{i}" for i in range(300)]
    result = compare_trajectories(_traj(*names), _exp(*names), ordering=ordering)  # type: ignore[arg-type]
    assert result.score == 1.0 and result.matched_steps == 300
