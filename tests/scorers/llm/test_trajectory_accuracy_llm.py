"""Trajectory accuracy (LLM) against scripted judge replies."""

from __future__ import annotations

from typing import Any

import pytest
from item_counts import asks_again_for, item_bounds

from agentevals import Run
from agentevals.scorers.llm import create_trajectory_accuracy_scorer_llm
from agentevals.scorers.utils import create_agent_test_run, create_test_message, create_tool_invocation
from agentevals.testing import FakeJudgeServer, Reply


def agent_run(*names: str, expected: Any = None) -> Run:
    run = create_agent_test_run(
        input_messages=["Find and summarise the report."],
        output=[
            create_test_message(
                "Here is the summary.",
                role="assistant",
                tool_invocations=[
                    create_tool_invocation(tool_name=n, args={"i": i}, result=f"r{i}")
                    for i, n in enumerate(names)
                ],
            )
        ],
    )
    return run.model_copy(update={"expected_trajectory": expected})


def analysis(*steps: tuple[bool, bool], missing: int = 0) -> dict[str, Any]:
    return {
        "step_evaluations": [
            {"step_name": f"s{i}", "was_necessary": nec, "was_in_order": order, "reasoning": "r"}
            for i, (nec, order) in enumerate(steps)
        ],
        "missing_steps": [f"m{i}" for i in range(missing)],
        "extra_steps": [],
        "overall_assessment": "overall",
    }


@pytest.mark.parametrize(
    ("steps", "missing", "expected"),
    [
        ([(True, True), (True, True)], 0, 1.0),  # a perfect trajectory scores 1 (Mastra: 0.9)
        ([(False, False), (False, False)], 0, 0.1),  # only the completeness part
        ([(True, False), (False, True)], 0, 0.55),  # 0.3 + 0.15 + 0.1
        ([(True, True)], 1, 0.95),  # 0.6 + 0.3 + 0.1 × (1 − 1/2)
        ([], 0, 1.0),
        ([], 2, 0.0),
    ],
)
async def test_formula(
    judge_server: FakeJudgeServer, steps: list[tuple[bool, bool]], missing: int, expected: float
) -> None:
    judge_server.push(analysis(*steps, missing=missing), "reason")
    names = [f"tool{i}" for i in range(len(steps))]
    result = await create_trajectory_accuracy_scorer_llm(judge_server.judge()).run(agent_run(*names))
    assert result.score == expected and result.reason == "reason"


async def test_fields_expected_trajectory_sources_and_scale(judge_server: FakeJudgeServer) -> None:
    judge_server.push(analysis((True, True), (True, True)), "Good.")
    scorer = create_trajectory_accuracy_scorer_llm(
        judge_server.judge(),
        expected_trajectory=["search", {"name": "summarize", "step_type": "tool_call"}],
        scale=5,
    )
    result = await scorer.run(agent_run("search", "summarize", expected=["ignored"]))
    assert result.raw_score == 5.0
    pre = result.preprocess_step_result
    assert pre["has_steps"] is True and [s["name"] for s in pre["actual_steps"]] == ["search", "summarize"]
    assert pre["actual_trajectory"] == (
        '1. [tool_call] search (args: {"i": 0}, result: "r0")\n'
        '2. [tool_call] summarize (args: {"i": 1}, result: "r1")'
    )
    prompt = result.analyze_prompt or ""
    assert (
        "Expected trajectory" in prompt and "2. [tool_call] summarize" in prompt and "ignored" not in prompt
    )
    assert "Find and summarise the report." in (result.generate_reason_prompt or "")
    judge_server.push(analysis((True, True)), "r")
    from_run = await create_trajectory_accuracy_scorer_llm(judge_server.judge()).run(
        agent_run("search", expected={"steps": [{"name": "search"}]})
    )
    assert "1. [tool_call] search" in (from_run.analyze_prompt or "").split("Expected trajectory")[1]
    judge_server.push(analysis((True, False)), "r")
    trajectory = Run(
        input="task", output={"steps": [{"step_type": "workflow_step", "name": "plan", "data": 1}]}
    )
    as_steps = await create_trajectory_accuracy_scorer_llm(judge_server.judge()).run(trajectory)
    assert "1. [workflow_step] plan (data: 1)" in (as_steps.analyze_prompt or "")
    assert "No expected trajectory" in (as_steps.analyze_prompt or "")


async def test_errors_and_retry(judge_server: FakeJudgeServer) -> None:
    judge_server.push(analysis((True, True)), analysis((True, True), (False, True)), "r")
    two = await create_trajectory_accuracy_scorer_llm(judge_server.judge()).run(agent_run("a", "b"))
    assert two.score == 0.7 and two.judge_calls[0].attempts == 2  # 0.6 × 1/2 + 0.3 + 0.1
    asked, retry = judge_server.requests[:2]
    assert item_bounds(asked, "step_evaluations") == (2, 2) and item_bounds(asked, "extra_steps") == (None, 2)
    assert item_bounds(asked, "missing_steps") == (None, 10)
    assert asks_again_for(retry, "step_evaluations", 2)
    with pytest.raises(ValueError, match="expected step needs a name"):
        create_trajectory_accuracy_scorer_llm("openai/gpt-4o-mini", expected_trajectory=[1])
    judge_server.push(Reply.malformed(), analysis((True, True)), "r")
    result = await create_trajectory_accuracy_scorer_llm(judge_server.judge()).run(agent_run("a"))
    assert result.score == 1.0 and result.judge_calls[0].attempts == 2


async def test_trajectory_models_are_accepted(judge_server: FakeJudgeServer) -> None:
    from pydantic import BaseModel

    class Step(BaseModel):
        name: str
        step_type: str = "tool_call"
        tool_args: dict[str, Any] | None = None

    class Steps(BaseModel):
        steps: list[Step]

    judge_server.push(analysis((True, True)), "r")
    run = Run(
        input="task",
        output=Steps(steps=[Step(name="fetch", tool_args={"id": 1})]),
        expected_trajectory=Steps(steps=[Step(name="fetch")]),
    )
    result = await create_trajectory_accuracy_scorer_llm(judge_server.judge()).run(run)
    prompt = result.analyze_prompt or ""
    assert '1. [tool_call] fetch (args: {"id": 1})' in prompt and "Expected trajectory" in prompt


async def test_result_has_both_trajectories_and_marks_unfinished_calls(judge_server: FakeJudgeServer) -> None:
    judge_server.push(analysis((True, True)), "reason")
    run = create_agent_test_run(
        input_messages=["q"],
        output=[
            create_test_message(
                "",
                role="assistant",
                tool_invocations=[{"tool_name": "search", "state": "call", "result": {}}],
            )
        ],
    ).model_copy(update={"expected_trajectory": ["search"]})
    result = await create_trajectory_accuracy_scorer_llm(judge_server.judge()).run(run)
    found = result.preprocess_step_result
    assert found["expected_steps"] == [{"name": "search"}]
    assert found["actual_steps"] == [
        {"step_type": "tool_call", "name": "search", "args": {}, "result": None, "state": "call"}
    ]
    assert "unfinished: never returned a result" in found["actual_trajectory"]
    assert found["expected_trajectory"] == "1. [tool_call] search"
