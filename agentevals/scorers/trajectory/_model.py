"""Trajectory models: the steps an agent took, the steps it was expected to take, and extraction.

A :class:`Trajectory` is a list of :class:`TrajectoryStep` (tool calls, model generations,
workflow steps, ...). Trajectory scorers read it from ``run.output`` with
:func:`trajectory_from_run`, which accepts a ``Trajectory`` (or its dict/list form) or the
agent's output messages, whose tool invocations become ``tool_call`` steps. The expectation
comes from the scorer's options or ``run.expected_trajectory`` as a
:class:`TrajectoryExpectation`, a list of steps, or a list of step names. Fields are snake_case;
Mastra's camelCase trajectories (``stepType``, ``toolArgs``) are read by ``Run.from_mastra``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agentevals._model._errors import SkipRun
from agentevals._model._messages import Message
from agentevals._model._run import Run

StepType = Literal[
    "tool_call",
    "mcp_tool_call",
    "model_generation",
    "agent_run",
    "workflow_step",
    "workflow_run",
    "workflow_conditional",
    "workflow_parallel",
    "workflow_loop",
    "workflow_sleep",
    "workflow_wait_event",
    "processor_run",
]
Ordering = Literal["strict", "relaxed", "unordered", "subset", "superset"]

_CONFIG = ConfigDict(extra="forbid", frozen=True)

DATA_FIELDS: tuple[str, ...] = (
    "tool_args", "tool_result", "success", "mcp_server",
    "model_id", "prompt_tokens", "completion_tokens", "finish_reason",
    "agent_id", "step_id", "status", "output", "workflow_id",
    "condition_count", "selected_steps", "branch_count", "parallel_steps", "loop_type", "total_iterations",
    "sleep_duration_ms", "sleep_type", "event_name", "event_received", "processor_id",
)  # fmt: skip
"""Step data an expectation may pin down; every field set on an expected step must match."""


class _StepData(BaseModel):
    model_config = _CONFIG

    tool_args: dict[str, Any] | None = None
    tool_result: Any = None
    success: bool | None = None
    mcp_server: str | None = None
    model_id: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    agent_id: str | None = None
    step_id: str | None = None
    status: str | None = None
    output: Any = None
    workflow_id: str | None = None
    condition_count: int | None = None
    selected_steps: list[str] | None = None
    branch_count: int | None = None
    parallel_steps: list[str] | None = None
    loop_type: str | None = None
    total_iterations: int | None = None
    sleep_duration_ms: float | None = None
    sleep_type: str | None = None
    event_name: str | None = None
    event_received: bool | None = None
    processor_id: str | None = None


class TrajectoryStep(_StepData):
    """One step an agent took. Fields other than ``name`` apply to some step types only."""

    name: str
    step_type: StepType = "tool_call"
    duration_ms: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    children: list[TrajectoryStep] | None = None
    message_index: int | None = None
    """The output message that made this tool call: calls sharing one were made in parallel."""


class Trajectory(BaseModel):
    """The ordered steps of one run. A bare list of steps is accepted too."""

    model_config = _CONFIG

    steps: list[TrajectoryStep] = Field(default_factory=list)
    total_duration_ms: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, data: Any) -> Any:
        return {"steps": data} if isinstance(data, list) else data


class ExpectedStep(_StepData):
    """A step the agent should take: ``name``, optionally ``step_type`` and any step data to match.

    A plain string is read as ``ExpectedStep(name=...)``; ``duration_ms`` and ``metadata`` of an
    actual step used as an expectation are ignored.
    """

    name: str
    step_type: StepType | None = None
    children: TrajectoryExpectation | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"name": data}
        if isinstance(data, TrajectoryStep):
            data = data.model_dump(exclude_none=True)
        if isinstance(data, Mapping):
            data = {k: v for k, v in data.items() if k not in _IGNORED_ON_EXPECTED}
            if isinstance(data.get("children"), list):
                data["children"] = {"steps": data["children"]}
        return data


_IGNORED_ON_EXPECTED = frozenset({"duration_ms", "metadata", "message_index"})


class TrajectoryExpectation(BaseModel):
    """What a trajectory should look like; every field is optional.

    ``steps`` with ``ordering`` (``"relaxed"`` by default) and ``allow_repeated_steps`` drive
    accuracy; ``max_steps``, ``max_total_tokens``, ``max_total_duration_ms`` and
    ``no_redundant_calls`` drive efficiency; ``blacklisted_tools`` and ``blacklisted_sequences``
    the blacklist; ``max_retries_per_tool`` the tool-failure check. A list is read as ``steps``.
    """

    model_config = _CONFIG

    steps: list[ExpectedStep] | None = None
    ordering: Ordering | None = None
    allow_repeated_steps: bool | None = None
    max_steps: int | None = None
    max_total_tokens: int | None = None
    max_total_duration_ms: float | None = None
    no_redundant_calls: bool | None = None
    blacklisted_tools: list[str] | None = None
    blacklisted_sequences: list[list[str]] | None = None
    max_retries_per_tool: int | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_steps(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"steps": data}
        if isinstance(data, Trajectory):
            return {"steps": data.steps}
        return data


def trajectory_from_messages(messages: list[Message]) -> Trajectory:
    """One ``tool_call`` step per tool invocation (made, answered or failed) in message order.

    Each step's ``message_index`` says which message made the call (parallel calls share one); a
    call that never returned (state ``"call"``) has no ``tool_result`` and ``status="unfinished"``.

    ``success`` is true when the invocation has a result and did not fail (state ``"error"``, an
    ``error`` message, or a result carrying an ``error`` field).
    """
    steps = [
        TrajectoryStep(
            name=inv.tool_name,
            tool_args=inv.args,
            tool_result=inv.result,
            success=inv.state == "result" and not inv.failed,
            status=None if inv.finished else "unfinished",
            duration_ms=inv.duration_ms,
            message_index=index,
        )
        for index, message in enumerate(messages)
        for inv in message.tool_invocations
        if inv.tool_name and inv.state != "partial-call"
    ]
    return Trajectory(steps=steps)


def trajectory_from_run(run: Run) -> Trajectory:
    """The trajectory of ``run``: ``run.output`` as a trajectory, or extracted from its messages.

    >>> from agentevals.scorers.utils import create_agent_test_run, create_test_message
    >>> from agentevals.scorers.utils import create_tool_invocation
    >>> run = create_agent_test_run(output=[create_test_message("Done.", role="assistant",
    ...     tool_invocations=[create_tool_invocation(tool_name="search", args={"q": "x"})])])
    >>> [(s.name, s.step_type, s.success) for s in trajectory_from_run(run).steps]
    [('search', 'tool_call', True)]
    """
    output = run.output
    if output is None:
        raise SkipRun(
            "a trajectory scorer needs run.output (a Trajectory or the agent's messages), got None",
            reason="no_output",
        )
    if isinstance(output, Trajectory):
        return output
    if isinstance(output, Mapping) or (isinstance(output, list) and not _all_messages(output)):
        return Trajectory.model_validate(output)
    return trajectory_from_messages(run.output_messages)


def _all_messages(items: list[Any]) -> bool:
    return all(isinstance(m, Message) for m in items)


def expectation_from(value: Any) -> TrajectoryExpectation | None:
    """``value`` (an expectation, trajectory, list of steps or names, or dict) as an expectation."""
    if value is None or isinstance(value, TrajectoryExpectation):
        return value
    return TrajectoryExpectation.model_validate(value)
