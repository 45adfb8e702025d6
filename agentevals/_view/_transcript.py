"""A stored run as a transcript to show: system/user/assistant/tool messages with their tool calls,
then the retrieved context. Stored inputs and outputs take several shapes (a string, a list of
messages, LangChain's ``{"input_messages": ..., "system_messages": ...}``, any JSON); each becomes
messages, and anything unrecognised is shown as JSON rather than dropped.

>>> [m.role for m in transcript({"input": '"hi"', "output": '"hello"', "context": None})]
['user', 'assistant']
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

_INPUT_PARTS = ("system_messages", "remembered_messages", "input_messages")


@dataclass(frozen=True)
class ToolCall:
    name: str
    args: str
    result: str | None
    error: str | None
    duration_ms: float | None
    state: str | None


@dataclass(frozen=True)
class Entry:
    """One message: its role, text, and the tool calls it made."""

    role: str
    content: str
    name: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)


def loads(value: Any) -> Any:
    """A stored JSON column's value (SQLite holds JSON text; psycopg gives the data)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def pretty(value: Any) -> str:
    """``value`` as readable text: strings as they are, anything else as indented JSON."""
    value = loads(value)
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def transcript(run: Mapping[str, Any]) -> list[Entry]:
    """The messages of a runs row (``input``, ``output``), in order."""
    return [*_messages(loads(run.get("input")), "user"), *_messages(loads(run.get("output")), "assistant")]


def context(run: Mapping[str, Any]) -> list[str]:
    """The retrieved context passages of a runs row."""
    value = loads(run.get("context"))
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [pretty(item) for item in items]


def _messages(value: Any, role: str) -> list[Entry]:
    if value is None:
        return []
    if isinstance(value, Mapping) and any(part in value for part in _INPUT_PARTS):
        return [entry for part in _INPUT_PARTS for entry in _messages(value.get(part) or [], role)]
    if isinstance(value, list) and all(_is_message(item) for item in value):
        return [_entry(item) for item in value]
    if _is_message(value):
        return [_entry(value)]
    return [Entry(role=role, content=pretty(value))]


def _is_message(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("role"), str)


def _entry(message: Mapping[str, Any]) -> Entry:
    calls = message.get("tool_invocations") or message.get("tool_calls") or []
    content = message.get("content")
    return Entry(
        role=str(message["role"]),
        content=content if isinstance(content, str) else pretty(content),
        name=message.get("name") if isinstance(message.get("name"), str) else None,
        reasoning=message.get("reasoning") if isinstance(message.get("reasoning"), str) else None,
        tool_calls=[_tool_call(call) for call in calls if isinstance(call, Mapping)],
    )


def _tool_call(call: Mapping[str, Any]) -> ToolCall:
    function = call.get("function") if isinstance(call.get("function"), Mapping) else {}
    assert isinstance(function, Mapping)
    duration = call.get("duration_ms")
    return ToolCall(
        name=str(call.get("tool_name") or call.get("name") or function.get("name") or "tool"),
        args=pretty(call.get("args", call.get("arguments", function.get("arguments")))),
        result=None if call.get("result") is None else pretty(call.get("result")),
        error=None if call.get("error") is None else str(call.get("error")),
        duration_ms=float(duration) if isinstance(duration, int | float) else None,
        state=call.get("state") if isinstance(call.get("state"), str) else None,
    )
