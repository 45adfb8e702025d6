"""create_tool_call_accuracy_scorer_code: the seed's examples as Python twins, the order fix, arguments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from agentevals import Run, ScorerError, ToolInvocation
from agentevals.scorers import create_tool_call_accuracy_scorer_code as create_code_scorer
from agentevals.scorers.utils import create_agent_test_run, create_test_message, create_tool_invocation

INPUT = [create_test_message("What is the weather like in New York today?", role="user", id="input-1")]


def _run(*invocations: ToolInvocation, content: str = "Let me help you with that.") -> Run:
    output = [create_test_message(content, role="assistant", id="output-1", tool_invocations=invocations)]
    return create_agent_test_run(input_messages=INPUT, output=output)


def _call(name: str, args: Mapping[str, Any] | None = None, state: Any = "result") -> ToolInvocation:
    return create_tool_invocation(
        tool_call_id=f"call-{name}", tool_name=name, args=args, result={}, state=state
    )


def test_seed_correct_tool_selection() -> None:
    scorer = create_code_scorer(expected_tool="weather-tool")
    run = _run(
        create_tool_invocation(
            tool_call_id="call-123",
            tool_name="weather-tool",
            args={"location": "New York"},
            result={"temperature": "72°F", "condition": "sunny"},
            state="result",
        ),
        content="Let me check the weather for you.",
    )
    result = scorer.run_sync(run)
    assert result.score == 1.0
    assert result.preprocess_step_result["correct_tool_called"] is True
    assert scorer.id == "tool_call_accuracy_code" and scorer.name == "Tool Call Accuracy Scorer"


def test_seed_strict_mode_fails_with_multiple_tools() -> None:
    strict = create_code_scorer(expected_tool="weather-tool", strict_mode=True)
    run = _run(_call("search-tool"), _call("weather-tool", {"location": "New York"}))
    assert strict.run_sync(run).score == 0.0
    assert create_code_scorer(expected_tool="weather-tool").run_sync(run).score == 1.0  # lenient


def test_seed_strict_tool_order() -> None:
    scorer = create_code_scorer(
        expected_tool="auth-tool", expected_tool_order=["auth-tool", "fetch-tool"], strict_mode=True
    )
    result = scorer.run_sync(
        _run(_call("auth-tool", {"token": "abc123"}), _call("fetch-tool", {"endpoint": "/data"}))
    )
    assert result.score == 1.0
    found = result.preprocess_step_result
    assert found["correct_order_called"] is True
    assert (
        found["correct_tool_called"] is False
    )  # strict single-tool check, ignored in order mode (as Mastra)


def test_seed_flexible_order() -> None:
    scorer = create_code_scorer(expected_tool="auth-tool", expected_tool_order=["auth-tool", "fetch-tool"])
    run = _run(_call("auth-tool"), _call("log-tool"), _call("fetch-tool"))
    assert scorer.run_sync(run).score == 1.0
    strict = create_code_scorer(expected_tool_order=["auth-tool", "fetch-tool"], strict_mode=True)
    assert strict.run_sync(run).score == 0.0


def test_seed_comparison_wrong_tool() -> None:
    scorer = create_code_scorer(expected_tool="weather-tool", strict_mode=False)
    result = scorer.run_sync(_run(_call("search-tool", {"query": "weather"})))
    assert result.score == 0.0
    assert result.reason == "Called search-tool; expected 'weather-tool': no match."


def test_non_strict_order_is_a_real_subsequence_check() -> None:
    # Mastra compares first occurrences and scores 0 here (recorded); B, A, B does contain A then B.
    scorer = create_code_scorer(expected_tool_order=["A", "B"])
    assert scorer.run_sync(_run(_call("B"), _call("A"), _call("B"))).score == 1.0
    assert scorer.run_sync(_run(_call("B"), _call("A"))).score == 0.0


def test_preprocess_result_fields() -> None:
    scorer = create_code_scorer(expected_tool="w", expected_tool_order=["w", "x"])
    found = scorer.run_sync(_run(_call("w"), _call("x"))).preprocess_step_result
    assert found == {
        "expected_tool": "w",
        "actual_tools": ["w", "x"],
        "strict_mode": False,
        "expected_tool_order": ["w", "x"],
        "has_tool_calls": True,
        "correct_tool_called": True,
        "correct_order_called": True,
        "tool_call_infos": [
            {"tool_name": "w", "tool_call_id": "call-w", "message_index": 0, "invocation_index": 0},
            {"tool_name": "x", "tool_call_id": "call-x", "message_index": 0, "invocation_index": 1},
        ],
        "expected_args": None,
        "args_mismatches": [],
    }


def test_recorded_edge_cases() -> None:
    single = create_code_scorer(expected_tool="weather-tool")
    assert single.run_sync(_run()).score == 0.0  # no tool calls
    assert single.run_sync(_run(_call("weather-tool", state="partial-call"))).score == 0.0  # still streaming
    assert single.run_sync(_run(_call("weather-tool", state="call"))).score == 1.0  # called, no result yet
    assert (
        create_code_scorer(expected_tool="w", strict_mode=True).run_sync(_run(_call("w"), _call("w"))).score
        == 0.0
    )
    extra = create_code_scorer(expected_tool_order=["a", "b"], strict_mode=True)
    assert extra.run_sync(_run(_call("a"), _call("b"), _call("c"))).score == 0.0


def test_calls_across_several_messages() -> None:
    run = create_agent_test_run(
        input_messages=INPUT,
        output=[
            create_test_message("", role="assistant", tool_invocations=[_call("auth-tool")]),
            create_test_message("Fetching.", role="assistant", tool_invocations=[_call("fetch-tool")]),
        ],
    )
    result = create_code_scorer(expected_tool_order=["auth-tool", "fetch-tool"], strict_mode=True).run_sync(
        run
    )
    assert result.score == 1.0
    assert [i["message_index"] for i in result.preprocess_step_result["tool_call_infos"]] == [0, 1]


def test_expected_args_exact_subset_and_custom() -> None:
    run = _run(_call("weather", {"city": "Paris", "units": "C"}))
    exact = create_code_scorer(expected_tool="weather", expected_args={"weather": {"city": "Paris"}})
    result = exact.run_sync(run)
    assert result.score == 0.0
    assert result.preprocess_step_result["args_mismatches"] == [
        {"tool_name": "weather", "tool_call_id": "call-weather", "args": {"city": "Paris", "units": "C"}}
    ]
    assert result.reason is not None and "Arguments did not match for: weather" in result.reason
    superset = create_code_scorer(
        expected_tool="weather", expected_args={"weather": {"city": "Paris"}}, tool_args_match="superset"
    )
    assert superset.run_sync(run).score == 1.0
    # LangChain's "subset": the call's arguments {city, units} must be a subset of the expected ones
    subset = create_code_scorer(
        expected_tool="weather", expected_args={"weather": {"city": "Paris"}}, tool_args_match="subset"
    )
    assert subset.run_sync(run).score == 0.0
    wider = {"weather": {"city": "Paris", "units": "C", "days": 3}}
    assert (
        create_code_scorer(expected_tool="weather", expected_args=wider, tool_args_match="subset")
        .run_sync(run)
        .score
        == 1.0
    )

    def same_city(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
        return str(actual.get("city", "")).lower() == str(expected["city"]).lower()

    custom = create_code_scorer(
        expected_tool="weather", expected_args={"weather": {"city": "PARIS"}}, tool_args_match=same_city
    )
    assert custom.run_sync(run).score == 1.0


def test_expected_args_in_order_mode() -> None:
    scorer = create_code_scorer(
        expected_tool_order=["search", "fetch"],
        expected_args={"fetch": {"id": 2}},
        tool_args_match="superset",
    )
    # the first fetch has the wrong id, the second one completes the order
    run = _run(_call("search"), _call("fetch", {"id": 1}), _call("fetch", {"id": 2}))
    assert scorer.run_sync(run).score == 1.0
    assert scorer.run_sync(_run(_call("search"), _call("fetch", {"id": 1}))).score == 0.0
    assert (
        create_code_scorer(expected_tool="n", expected_args={"n": {"x": 1}})
        .run_sync(_run(_call("n", {"x": 1.0})))
        .score
        == 1.0
    )  # 1 == 1.0, as in JSON


def test_configuration_errors() -> None:
    with pytest.raises(ValueError, match="Either expected_tool or expected_tool_order must be provided"):
        create_code_scorer()
    with pytest.raises(ValueError, match="Either expected_tool or expected_tool_order must be provided"):
        create_code_scorer(expected_tool_order=[])
    with pytest.raises(ValueError, match="list of tool names"):
        create_code_scorer(expected_tool_order="search")
    with pytest.raises(ValueError, match="non-empty tool name"):
        create_code_scorer(expected_tool="")
    with pytest.raises(ValueError, match="not expected"):
        create_code_scorer(expected_tool="a", expected_args={"b": {}})
    with pytest.raises(ValueError, match="tool_args_match"):
        create_code_scorer(expected_tool="a", tool_args_match="fuzzy")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="args_match"):
        create_code_scorer(expected_tool="a", args_match="superset")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="strict_mode"):
        create_code_scorer(expected_tool="a", strict_mode="yes")  # type: ignore[arg-type]


def test_empty_input_or_output_is_a_clear_error() -> None:
    scorer = create_code_scorer(expected_tool="x")
    message = "Input and output messages cannot be null or empty"
    with pytest.raises(ScorerError, match=message):
        scorer.run_sync(create_agent_test_run(input_messages=[], output=[]))
    with pytest.raises(ScorerError, match=message):
        scorer.run_sync(input="hi", output=None)
    with pytest.raises(ScorerError, match=message):
        scorer.run_sync(create_agent_test_run(input_messages=INPUT, output=[]))


def test_plain_text_output_has_no_tool_calls() -> None:
    assert create_code_scorer(expected_tool="x").run_sync(input="hi", output="hello").score == 0.0


def test_many_calls() -> None:
    calls = [_call(f"t{i % 50}") for i in range(2_000)]
    scorer = create_code_scorer(expected_tool_order=[f"t{i}" for i in range(50)])
    assert scorer.run_sync(_run(*calls)).score == 1.0
