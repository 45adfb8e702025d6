"""Trajectory accuracy, efficiency, blacklist and tool-failure scorers."""

from __future__ import annotations

import pytest

from agentevals import Run, ScorerError
from agentevals.scorers import (
    TrajectoryExpectation,
    create_tool_failures_scorer,
    create_trajectory_accuracy_scorer_code,
    create_trajectory_blacklist_scorer,
    create_trajectory_efficiency_scorer,
    create_trajectory_scorer,
)
from agentevals.scorers.utils import create_agent_test_run, create_test_message, create_tool_invocation


def _steps(*names: str) -> list[dict[str, str]]:
    return [{"name": n} for n in names]


def test_accuracy_with_static_expectation() -> None:
    scorer = create_trajectory_accuracy_scorer_code(
        {
            "steps": [
                {"step_type": "tool_call", "name": "search"},
                {"step_type": "tool_call", "name": "summarize"},
            ]
        },
        ordering="relaxed",
    )
    assert (scorer.id, scorer.type) == ("trajectory_accuracy_code", "trajectory")
    assert "search → summarize" in scorer.description
    result = scorer.run_sync(input="q", output=_steps("search", "summarize", "extra"))
    assert result.score == 1.0
    found = result.preprocess_step_result
    assert [s["name"] for s in found["actual_trajectory"]] == ["search", "summarize", "extra"]
    assert found["comparison"]["extra_steps"] == ["extra"]
    assert result.reason == "2/2 expected steps matched (relaxed); extra: extra."


def test_accuracy_reads_tool_calls_from_messages() -> None:
    run = create_agent_test_run(
        input_messages=["Find and summarize"],
        output=[
            create_test_message(
                "Done.",
                role="assistant",
                tool_invocations=[
                    create_tool_invocation(tool_name="search", args={"q": "x"}),
                    create_tool_invocation(tool_name="summarize"),
                ],
            )
        ],
    )
    scorer = create_trajectory_accuracy_scorer_code(
        [{"name": "search", "tool_args": {"q": "x"}}, "summarize"], ordering="strict"
    )
    assert scorer.run_sync(run).score == 1.0


def test_item_expectation_and_overrides() -> None:
    scorer = create_trajectory_accuracy_scorer_code()
    run = Run(
        input="q", output=_steps("b", "a"), expected_trajectory={"steps": ["a", "b"], "ordering": "unordered"}
    )
    result = scorer.run_sync(run)
    assert result.score == 1.0 and result.preprocess_step_result["ordering"] == "unordered"
    strict_item = Run(
        input="q", output=_steps("b", "a"), expected_trajectory={"steps": ["a", "b"], "ordering": "strict"}
    )
    assert scorer.run_sync(strict_item).score == 0.0
    repeats = Run(
        input="q",
        output=_steps("a", "a", "b"),
        expected_trajectory=TrajectoryExpectation.model_validate(
            {"steps": ["a", "b"], "allow_repeated_steps": False}
        ),
    )
    assert scorer.run_sync(repeats).score == 0.9


def test_static_expectation_wins_over_item_steps() -> None:
    scorer = create_trajectory_accuracy_scorer_code(["a"])
    run = Run(input="q", output=_steps("a"), expected_trajectory=["zzz"])
    assert scorer.run_sync(run).score == 1.0


def test_args_match_option() -> None:
    output = [{"name": "get", "tool_args": {"id": 1, "verbose": True}}]
    expected = [{"name": "get", "tool_args": {"id": 1}}]
    assert create_trajectory_accuracy_scorer_code(expected).run_sync(input="q", output=output).score == 0.0
    superset = create_trajectory_accuracy_scorer_code(expected, tool_args_match="superset")
    assert superset.run_sync(input="q", output=output).score == 1.0
    # "subset": the call's arguments must all be expected ones (LangChain's meaning)
    subset = create_trajectory_accuracy_scorer_code(expected, tool_args_match="subset")
    assert subset.run_sync(input="q", output=output).score == 0.0
    fewer = [{"name": "get", "tool_args": {"id": 1, "verbose": True, "page": 2}}]
    assert (
        create_trajectory_accuracy_scorer_code(fewer, tool_args_match="subset")
        .run_sync(input="q", output=output)
        .score
        == 1.0
    )
    assert (
        create_trajectory_scorer(defaults={"steps": fewer}, tool_args_match="subset")
        .run_sync(input="q", output=output)
        .score
        == 1.0
    )


def test_missing_expectation_is_a_clear_error() -> None:
    with pytest.raises(ScorerError, match="No expected trajectory"):
        create_trajectory_accuracy_scorer_code().run_sync(input="q", output=_steps("a"))
    with pytest.raises(ValueError, match="ordering must be one of"):
        create_trajectory_accuracy_scorer_code(["a"], ordering="loose")  # type: ignore[arg-type]
    with pytest.raises(ScorerError, match=r"run\.output"):
        create_trajectory_accuracy_scorer_code(["a"]).run_sync(input="q", output=None)


def test_efficiency_scorer() -> None:
    scorer = create_trajectory_efficiency_scorer(max_steps=2)
    assert scorer.id == "trajectory_efficiency"
    assert scorer.run_sync(input="q", output=_steps("a", "b", "c")).score == 0.75
    item = Run(input="q", output=_steps("a", "b", "c"), expected_trajectory={"max_steps": 3})
    assert scorer.run_sync(item).score == 1.0
    redundant = [{"name": "s", "tool_args": {"q": 1}}] * 3
    assert create_trajectory_efficiency_scorer().run_sync(input="q", output=redundant).score == 0.6
    with pytest.raises(ValueError, match="Invalid max_total_tokens budget"):
        create_trajectory_efficiency_scorer(max_total_tokens=-5)
    with pytest.raises(ScorerError, match="token budget"):
        create_trajectory_efficiency_scorer(max_total_tokens=5).run_sync(input="q", output=_steps("a"))


def test_blacklist_scorer() -> None:
    scorer = create_trajectory_blacklist_scorer(
        blacklisted_tools=["delete_all"], blacklisted_sequences=[["a", "b"]]
    )
    assert scorer.id == "trajectory_blacklist"
    assert scorer.run_sync(input="q", output=_steps("search", "delete_all")).score == 0.0
    assert scorer.run_sync(input="q", output=_steps("a", "x", "b")).score == 1.0
    assert scorer.run_sync(input="q", output=_steps("a", "b")).score == 0.0
    item = Run(input="q", output=_steps("search"), expected_trajectory={"blacklisted_tools": ["search"]})
    assert scorer.run_sync(item).preprocess_step_result["violated_tools"] == ["search"]
    with pytest.raises(ValueError, match="list of lists"):
        create_trajectory_blacklist_scorer(blacklisted_sequences=["ab"])


def test_tool_failures_scorer() -> None:
    scorer = create_tool_failures_scorer(max_retries_per_tool=1)
    assert scorer.id == "tool_failures"
    output = [{"name": "api", "success": False}] * 3 + [{"name": "api", "success": True}]
    result = scorer.run_sync(input="q", output=output)
    assert result.score == 0.6  # 3 retries, 2 beyond the limit
    assert result.preprocess_step_result["patterns"][0]["eventually_succeeded"] is True
    assert (
        scorer.run_sync(Run(input="q", output=output, expected_trajectory={"max_retries_per_tool": 3})).score
        == 1.0
    )
    with pytest.raises(ValueError, match="non-negative integer"):
        create_tool_failures_scorer(max_retries_per_tool=-1)


def _parallel_run(*messages: tuple[str, ...]) -> Run:
    """One assistant message per tuple; the tools in a tuple were called in parallel."""
    output = [
        create_test_message(
            "",
            role="assistant",
            tool_invocations=[create_tool_invocation(tool_name=t, tool_call_id=f"{i}-{t}") for t in tools],
        )
        for i, tools in enumerate(messages)
    ]
    return create_agent_test_run(input_messages=["q"], output=output)


def test_strict_ordering_lets_parallel_calls_match_in_any_order() -> None:
    run = _parallel_run(("search",), ("weather", "news"), ("answer",))
    expected = ["search", "news", "weather", "answer"]
    strict = create_trajectory_accuracy_scorer_code(expected, ordering="strict")
    result = strict.run_sync(run)
    assert result.score == 1.0
    assert result.preprocess_step_result["comparison"]["out_of_order_steps"] == []
    ordered = create_trajectory_accuracy_scorer_code(
        expected, ordering="strict", unordered_parallel_calls=False
    )
    result = ordered.run_sync(run)
    assert result.score == 0.5
    assert result.preprocess_step_result["comparison"]["out_of_order_steps"] == ["weather", "news"]
    combined = create_trajectory_scorer(defaults={"steps": expected, "ordering": "strict"})
    assert combined.run_sync(run).score == 1.0


def test_calls_of_different_messages_stay_ordered_under_strict() -> None:
    run = _parallel_run(("search",), ("weather",), ("news",), ("answer",))
    strict = create_trajectory_accuracy_scorer_code(
        ["search", "news", "weather", "answer"], ordering="strict"
    )
    assert strict.run_sync(run).score == 0.5
