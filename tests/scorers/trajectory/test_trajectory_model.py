"""Trajectory models, extraction from runs, and expectation parsing."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentevals import Run
from agentevals.scorers import (
    ExpectedStep,
    Trajectory,
    TrajectoryExpectation,
    TrajectoryStep,
    trajectory_from_run,
)
from agentevals.scorers.trajectory._model import expectation_from
from agentevals.scorers.utils import create_agent_test_run, create_test_message, create_tool_invocation
from agentevals.steps import SkipRun


def test_tool_invocations_become_tool_call_steps() -> None:
    run = create_agent_test_run(
        input_messages=["q"],
        output=[
            create_test_message(
                "",
                role="assistant",
                tool_invocations=[
                    create_tool_invocation(tool_name="search", args={"q": "x"}, result={"hits": 3}),
                    create_tool_invocation(tool_name="fetch", state="call"),
                    create_tool_invocation(tool_name="draft", state="partial-call"),
                ],
            ),
            create_test_message(
                "done",
                role="assistant",
                tool_invocations=[create_tool_invocation(tool_name="api", result={"error": "500"})],
            ),
        ],
    )
    steps = trajectory_from_run(run).steps
    assert [(s.name, s.step_type, s.success) for s in steps] == [
        ("search", "tool_call", True),
        ("fetch", "tool_call", False),  # made but never answered
        ("api", "tool_call", False),  # the result carries an error
    ]
    assert steps[0].tool_args == {"q": "x"} and steps[0].tool_result == {"hits": 3}


def test_output_as_trajectory_dict_or_list() -> None:
    as_dict = Run(
        input="q", output={"steps": [{"name": "a", "step_type": "model_generation", "prompt_tokens": 3}]}
    )
    step = trajectory_from_run(as_dict).steps[0]
    assert (step.name, step.step_type, step.prompt_tokens) == ("a", "model_generation", 3)
    as_list = Run(input="q", output=[{"name": "a"}, {"name": "b", "tool_args": {"x": 1}}])
    assert [s.name for s in trajectory_from_run(as_list).steps] == ["a", "b"]
    model = Trajectory(steps=[TrajectoryStep(name="z")], total_duration_ms=5)
    assert trajectory_from_run(Run(input="q", output=model)) is model


def test_plain_text_output_has_no_steps_and_none_skips_the_run() -> None:
    assert trajectory_from_run(Run(input="q", output="just text")).steps == []
    with pytest.raises(SkipRun, match=r"run\.output"):
        trajectory_from_run(Run(input="q", output=None))


def test_typos_in_steps_are_rejected() -> None:
    with pytest.raises(ValidationError):
        Trajectory.model_validate([{"name": "a", "toolArg": {}}])
    with pytest.raises(ValidationError):
        TrajectoryStep(name="a", step_type="tool")  # type: ignore[arg-type]


def test_expectations_from_names_steps_and_trajectories() -> None:
    names = expectation_from(["search", "answer"])
    assert names is not None and [s.name for s in names.steps or []] == ["search", "answer"]
    assert names.steps is not None and names.steps[0].step_type is None
    parsed = expectation_from(
        {
            "steps": [{"name": "agent", "step_type": "agent_run", "duration_ms": 4, "children": ["a", "b"]}],
            "ordering": "strict",
            "max_steps": 3,
        }
    )
    assert parsed is not None and parsed.ordering == "strict" and parsed.max_steps == 3
    child = parsed.steps[0].children if parsed.steps else None
    assert child is not None and [s.name for s in child.steps or []] == ["a", "b"]
    from_actual = expectation_from(
        Trajectory(steps=[TrajectoryStep(name="x", duration_ms=9, tool_args={"a": 1})])
    )
    assert from_actual is not None and from_actual.steps == [
        ExpectedStep(name="x", step_type="tool_call", tool_args={"a": 1})
    ]
    assert expectation_from(None) is None
    existing = TrajectoryExpectation(max_steps=1)
    assert expectation_from(existing) is existing
    with pytest.raises(ValidationError):
        expectation_from({"ordering": "sideways"})
