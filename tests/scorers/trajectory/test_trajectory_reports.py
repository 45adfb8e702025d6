"""What trajectory results report: unfinished calls, both trajectories, out-of-order step, failures."""

from __future__ import annotations

from agentevals import Run, ToolInvocation
from agentevals.scorers import create_tool_failures_scorer, create_trajectory_accuracy_scorer_code
from agentevals.scorers.trajectory import Trajectory, compare_trajectories, trajectory_from_run
from agentevals.scorers.trajectory._model import ExpectedStep
from agentevals.scorers.utils import create_agent_test_run, create_test_message, create_tool_invocation


def _run(*invocations: ToolInvocation | dict[str, object]) -> Run:
    return create_agent_test_run(
        input_messages=["q"],
        output=[create_test_message("", role="assistant", tool_invocations=list(invocations))],
    )


def test_a_call_that_never_returned_has_no_result_and_is_unfinished() -> None:
    invocation = ToolInvocation(tool_name="search", state="call", result={})
    assert invocation.result is None and not invocation.finished
    assert ToolInvocation(tool_name="search", result={}).result == {}  # a returned {} is a real result
    (step,) = trajectory_from_run(_run({"tool_name": "search", "state": "call", "result": {}})).steps
    assert step.tool_result is None and step.success is False and step.status == "unfinished"


def test_accuracy_result_has_both_trajectories_in_one_shape_with_step_types() -> None:
    run = _run(create_tool_invocation(tool_name="search", args={"q": "x"}, result="r"))
    expected = ["search", {"name": "answer", "step_type": "model_generation", "finish_reason": "stop"}]
    found = create_trajectory_accuracy_scorer_code(expected).run_sync(run).preprocess_step_result
    assert found["actual_trajectory"] == [
        {
            "name": "search",
            "step_type": "tool_call",
            "args": {"q": "x"},
            "data": {"tool_result": "r", "success": True},
        }
    ]
    assert found["expected_trajectory"] == [
        {"name": "search", "step_type": None, "args": None, "data": {}},
        {"name": "answer", "step_type": "model_generation", "args": None, "data": {"finish_reason": "stop"}},
    ]
    assert "actual_step_names" not in found and "expected_step_names" not in found


def _steps(*names: str) -> Trajectory:
    return Trajectory(steps=[{"name": n} for n in names])


def _expected(*names: str) -> list[ExpectedStep]:
    return [ExpectedStep(name=n) for n in names]


def test_the_first_step_out_of_place_is_reported() -> None:
    # the agent answered before summarising: "answer" is the step out of place (as in Mastra)
    relaxed = compare_trajectories(
        _steps("search", "answer", "summarize"), _expected("search", "summarize", "answer")
    )
    assert relaxed.score == 0.67 and relaxed.out_of_order_steps == ["answer"]
    swapped = compare_trajectories(_steps("b", "a"), _expected("a", "b"))
    assert swapped.out_of_order_steps == ["b"] and swapped.missing_steps == ["b"]


def test_a_run_whose_only_tool_call_raised_is_a_failure() -> None:
    scorer = create_tool_failures_scorer()
    raised = _run({"tool_name": "api", "state": "error", "error": "Timeout"})
    result = scorer.run_sync(raised)
    assert result.score == 0.0
    assert result.preprocess_step_result["unrecovered_tools"] == ["api"]
    never_returned = _run({"tool_name": "api", "state": "call"})
    assert scorer.run_sync(never_returned).score == 0.0
    # recovered: a retry succeeded, or another tool took over
    retried = _run({"tool_name": "api", "state": "error", "error": "x"}, {"tool_name": "api", "result": 1})
    assert scorer.run_sync(retried).score == 1.0
    fallback = _run(
        {"tool_name": "api", "state": "error", "error": "x"}, {"tool_name": "backup", "result": 1}
    )
    assert scorer.run_sync(fallback).score == 1.0
    # one unrecovered failure among four runs of calls
    mixed = _run(
        {"tool_name": "a", "result": 1},
        {"tool_name": "b", "result": 1},
        {"tool_name": "c", "result": 1},
        {"tool_name": "api", "state": "error", "error": "x"},
    )
    assert scorer.run_sync(mixed).score == 0.75
