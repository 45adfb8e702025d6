"""Helpers for reading runs inside scorer steps and for building test runs.

Every reader accepts ``run.input`` / ``run.output`` in any shape a :class:`~agentevals.Run` holds: an
:class:`~agentevals.AgentInput`, a list of messages, or a plain string.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from agentevals._model._messages import AgentInput, Message, Role, ToolInvocation, ToolState
from agentevals._model._run import Run

__all__ = [
    "ToolCallInfo",
    "ToolCalls",
    "ToolResult",
    "create_agent_test_run",
    "create_test_message",
    "create_tool_invocation",
    "extract_agent_response_messages",
    "extract_input_messages",
    "extract_tool_calls",
    "extract_tool_results",
    "get_assistant_message_from_run_output",
    "get_combined_system_prompt",
    "get_reasoning_from_run_output",
    "get_system_messages_from_run_input",
    "get_user_message_from_run_input",
    "round_to_two_decimals",
]


class ToolCallInfo(NamedTuple):
    tool_name: str
    tool_call_id: str
    message_index: int
    invocation_index: int


class ToolCalls(NamedTuple):
    """``tools`` in call order (repeats kept) and where each call sits in the output."""

    tools: list[str]
    tool_call_infos: list[ToolCallInfo]


class ToolResult(NamedTuple):
    tool_name: str
    tool_call_id: str
    args: dict[str, Any]
    result: Any


def _input_of(run_input: Any) -> AgentInput:
    if isinstance(run_input, AgentInput):
        return run_input
    if isinstance(run_input, Run):
        return run_input.agent_input
    return Run(input=run_input).agent_input


def _messages_of(run_output: Any) -> list[Message]:
    if isinstance(run_output, Run):
        return run_output.output_messages
    return Run(output=run_output).output_messages


def get_user_message_from_run_input(run_input: Any) -> str | None:
    """The text of the first user message of the input, or ``None``."""
    return next((m.content for m in _input_of(run_input).input_messages if m.role == "user"), None)


def get_assistant_message_from_run_output(run_output: Any) -> str | None:
    """The text of the first assistant message of the output, or ``None``."""
    return next((m.content for m in _messages_of(run_output) if m.role == "assistant"), None)


def get_reasoning_from_run_output(run_output: Any) -> str | None:
    """The reasoning of the output's assistant messages joined with newlines, or ``None``."""
    texts = [m.reasoning for m in _messages_of(run_output) if m.role == "assistant" and m.reasoning]
    return "\n".join(texts) if texts else None


def get_system_messages_from_run_input(run_input: Any) -> list[str]:
    """All system prompts: plain system messages, then tagged ones; empty ones dropped."""
    agent_input = _input_of(run_input)
    texts = [m.content for m in agent_input.system_messages if m.content]
    for tagged in agent_input.tagged_system_messages.values():
        texts.extend(m.content for m in tagged if m.content)
    texts.extend(m.content for m in agent_input.input_messages if m.role == "system" and m.content)
    return texts


def get_combined_system_prompt(run_input: Any) -> str:
    """All system prompts joined with a blank line."""
    return "\n\n".join(get_system_messages_from_run_input(run_input))


def extract_input_messages(run_input: Any) -> list[str]:
    """The text of every input message."""
    return [m.content for m in _input_of(run_input).input_messages]


def extract_agent_response_messages(run_output: Any) -> list[str]:
    """The text of every assistant message of the output."""
    return [m.content for m in _messages_of(run_output) if m.role == "assistant"]


def extract_tool_calls(run_output: Any) -> ToolCalls:
    """Every tool call of the output (state ``call``, ``result`` or ``error``) in order.

    >>> run = create_agent_test_run(output=[create_test_message(
    ...     "Checking.", role="assistant",
    ...     tool_invocations=[create_tool_invocation(tool_name="weather", tool_call_id="c1")])])
    >>> tools, infos = extract_tool_calls(run.output)
    >>> tools, infos[0].message_index
    (['weather'], 0)
    """
    tools: list[str] = []
    infos: list[ToolCallInfo] = []
    for m_index, message in enumerate(_messages_of(run_output)):
        for i_index, inv in enumerate(message.tool_invocations):
            if inv.state == "partial-call" or not inv.tool_name:
                continue
            tools.append(inv.tool_name)
            call_id = inv.tool_call_id or f"{m_index}-{i_index}"
            infos.append(ToolCallInfo(inv.tool_name, call_id, m_index, i_index))
    return ToolCalls(tools, infos)


def extract_tool_results(run_output: Any) -> list[ToolResult]:
    """The tool calls that returned a result, with their arguments and results."""
    return [
        ToolResult(inv.tool_name, inv.tool_call_id, inv.args, inv.result)
        for message in _messages_of(run_output)
        for inv in message.tool_invocations
        if inv.state == "result" and inv.result is not None
    ]


def create_tool_invocation(
    *,
    tool_name: str,
    tool_call_id: str = "",
    args: Mapping[str, Any] | None = None,
    result: Any = None,
    state: ToolState = "result",
) -> ToolInvocation:
    """A tool invocation for tests."""
    return ToolInvocation(
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        args=dict(args or {}),
        result=result,
        state=state,
    )


def create_test_message(
    content: str,
    role: Role = "user",
    *,
    id: str = "test-message",
    tool_invocations: Sequence[ToolInvocation | Mapping[str, Any]] = (),
) -> Message:
    """A message for tests.

    >>> create_test_message("The weather is sunny.", role="assistant").content
    'The weather is sunny.'
    """
    invocations = [ToolInvocation.model_validate(t) for t in tool_invocations]
    return Message(role=role, content=content, id=id, tool_invocations=invocations)


def create_agent_test_run(
    *,
    input_messages: Sequence[Message | Mapping[str, Any] | str] = (),
    output: Sequence[Message | Mapping[str, Any]] = (),
    remembered_messages: Sequence[Message | Mapping[str, Any] | str] = (),
    system_messages: Sequence[Message | Mapping[str, Any] | str] = (),
    tagged_system_messages: Mapping[str, Sequence[Message | Mapping[str, Any] | str]] | None = None,
    request_context: Mapping[str, Any] | None = None,
    ground_truth: Any = None,
    run_id: str | None = None,
) -> Run:
    """A complete agent run for tests.

    A bare string for ``input_messages``, ``remembered_messages`` or ``system_messages`` is one
    message (as in :class:`~agentevals.AgentInput`); ``output`` must be a list of messages.
    """
    if isinstance(output, str):
        raise TypeError(
            "create_agent_test_run(output=...) takes a list of messages, not a string: pass "
            f"output=[create_test_message({output[:40]!r}, role='assistant')]"
        )
    agent_input = AgentInput.model_validate(
        {
            "input_messages": _message_list(input_messages),
            "remembered_messages": _message_list(remembered_messages),
            "system_messages": _message_list(system_messages),
            "tagged_system_messages": {
                k: _message_list(v) for k, v in (tagged_system_messages or {}).items()
            },
        }
    )
    return Run(
        input=agent_input,
        output=[Message.model_validate(m) for m in output],
        ground_truth=ground_truth,
        request_context=dict(request_context or {}),
        run_id=run_id,
    )


def _message_list(messages: Sequence[Message | Mapping[str, Any] | str]) -> list[Any]:
    """A string is one message, not a sequence of one-character messages."""
    return [messages] if isinstance(messages, str) else list(messages)


def round_to_two_decimals(value: float) -> float:
    """Round half away from zero to two decimals (0.835 → 0.84, not banker's rounding)."""
    scaled = abs(value) * 100
    rounded = math.floor(scaled + 0.5 + 1e-9) / 100
    return math.copysign(rounded, value)
