"""Efficiency, blacklist and tool-failure checks (values recorded from @mastra/evals 1.10.2 utils)."""

from __future__ import annotations

import pytest

from agentevals.scorers import (
    Trajectory,
    analyze_tool_failures,
    check_trajectory_blacklist,
    check_trajectory_efficiency,
)
from agentevals.steps import SkipRun


def test_efficiency_all_dimensions() -> None:
    trajectory = Trajectory.model_validate(
        [
            {"name": "s", "tool_args": {"q": 1}, "duration_ms": 100},
            {"name": "s", "tool_args": {"q": 1}, "duration_ms": 100},
            {
                "name": "llm",
                "step_type": "model_generation",
                "prompt_tokens": 800,
                "completion_tokens": 400,
                "duration_ms": 900,
            },
        ]
    )
    result = check_trajectory_efficiency(
        trajectory, max_steps=2, max_total_tokens=1000, max_total_duration_ms=1000
    )
    # steps 0.5, tokens 0.8, duration 0.9, one redundant call 0.8 → mean 0.75 (same as Mastra)
    assert result.score == 0.75
    assert (result.total_steps, result.total_tokens, result.total_duration_ms) == (3, 1200, 1100)
    assert result.over_step_budget and result.over_token_budget and result.over_duration_budget
    assert [(c.name, c.index) for c in result.redundant_calls] == [("s", 1)]


def test_efficiency_nested_tokens_total_duration_and_no_budgets() -> None:
    trajectory = Trajectory.model_validate(
        {
            "steps": [
                {
                    "name": "agent",
                    "step_type": "agent_run",
                    "children": [
                        {
                            "name": "m",
                            "step_type": "model_generation",
                            "prompt_tokens": 5,
                            "completion_tokens": 5,
                        }
                    ],
                }
            ],
            "total_duration_ms": 50,
        }
    )
    result = check_trajectory_efficiency(trajectory, max_total_tokens=10, max_total_duration_ms=100)
    assert (result.total_tokens, result.total_duration_ms, result.score) == (10, 50, 1.0)
    assert check_trajectory_efficiency(Trajectory(), no_redundant_calls=False).score == 1.0
    assert check_trajectory_efficiency(Trajectory.model_validate([{"name": "a"}]), max_steps=0).score == 0.5


def test_efficiency_skips_budgets_it_cannot_measure() -> None:
    steps = Trajectory.model_validate([{"name": "a"}])
    with pytest.raises(SkipRun, match="token budget") as tokens:
        check_trajectory_efficiency(steps, max_total_tokens=10)
    with pytest.raises(SkipRun, match="duration budget") as durations:
        check_trajectory_efficiency(steps, max_total_duration_ms=10)
    assert (tokens.value.reason, durations.value.reason) == ("no_token_counts", "no_durations")
    with pytest.raises(ValueError, match="Invalid max_steps budget"):
        check_trajectory_efficiency(steps, max_steps=-1)


def test_blacklist() -> None:
    trajectory = Trajectory.model_validate([{"name": n} for n in ("a", "delete", "commit", "b")])
    result = check_trajectory_blacklist(
        trajectory, blacklisted_tools=["drop"], blacklisted_sequences=[["delete", "commit"], ["b", "a"]]
    )
    assert (result.score, result.violated_tools, result.violated_sequences) == (
        0.0,
        [],
        [["delete", "commit"]],
    )
    assert check_trajectory_blacklist(trajectory, blacklisted_tools=["b"]).violated_tools == ["b"]
    assert check_trajectory_blacklist(trajectory, blacklisted_sequences=[[]]).score == 1.0
    assert check_trajectory_blacklist(trajectory).score == 1.0


def test_tool_failures() -> None:
    trajectory = Trajectory.model_validate(
        [{"name": "api", "success": False}] * 4 + [{"name": "fallback", "success": True}]
    )
    result = analyze_tool_failures(trajectory, max_retries_per_tool=2)
    assert (result.score, result.total_retries, result.excessive_retry_tools) == (0.8, 3, ["api"])
    pattern = result.patterns[0]
    assert (pattern.retry_count, pattern.fell_back_to_alternative, pattern.alternative_tool) == (
        3,
        True,
        "fallback",
    )
    assert not pattern.eventually_succeeded


def test_tool_failures_recovered_and_ignored_steps() -> None:
    recovered = Trajectory.model_validate(
        [
            {"name": "api", "success": False},
            {"name": "api", "success": True},
            {"name": "llm", "step_type": "model_generation"},
        ]
    )
    result = analyze_tool_failures(recovered)
    assert result.score == 1.0 and result.patterns[0].eventually_succeeded
    assert analyze_tool_failures(Trajectory()).patterns == []
    assert (
        analyze_tool_failures(
            Trajectory.model_validate([{"name": "a", "success": False}] * 8), max_retries_per_tool=0
        ).score
        == 0.0
    )
    with pytest.raises(ValueError, match="non-negative integer"):
        analyze_tool_failures(Trajectory(), max_retries_per_tool=-1)
