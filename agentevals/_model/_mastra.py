"""Mastra's shapes, read at one boundary: ``Run.from_mastra``.

Mastra spells fields in camelCase (``groundTruth``, ``inputMessages``, ``toolCallId``, ``stepType``)
and stores messages as ``MastraDBMessage``: ``{id, role, createdAt, threadId?, resourceId?, type?,
content: {format: 2, parts: [...], content?, toolInvocations?, reasoning?, metadata?}}``. This module
turns them into our snake_case fields; no other model accepts them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")

_MESSAGE_FIELDS = ("id", "role", "content", "name")
_MESSAGE_METADATA = {
    "createdAt": "created_at",
    "threadId": "thread_id",
    "resourceId": "resource_id",
    "type": "type",
}
_AGENT_INPUT_KEYS = ("inputMessages", "rememberedMessages", "systemMessages", "taggedSystemMessages")


def snake_case(key: str) -> str:
    """``toolCallId`` → ``tool_call_id`` (snake_case keys are returned as they are)."""
    return _CAMEL.sub("_", key).lower()


_OPAQUE = frozenset({"args", "tool_args", "tool_result", "result", "output", "metadata"})
"""Fields whose values are the user's data: their keys are kept as they are."""


def snake_keys(value: Any) -> Any:
    """``value`` with mapping keys in snake_case, recursively, except inside data fields such as
    ``toolArgs`` or ``result`` (a Mastra trajectory or tool invocation, say)."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            name = snake_case(str(key))
            out[name] = item if name in _OPAQUE else snake_keys(item)
        return out
    if isinstance(value, list | tuple):
        return [snake_keys(v) for v in value]
    return value


def message_from_mastra(message: Any) -> Any:
    """One stored Mastra message as our message fields; anything else is returned unchanged.

    The content object is flattened (its ``content`` text, else the last text part), tool invocations
    come from ``content.toolInvocations`` or the ``tool-invocation`` parts, reasoning from
    ``content.reasoning`` or the reasoning parts; ``createdAt``, ``threadId``, ``resourceId`` and
    ``type`` are kept in ``metadata``.
    """
    if not isinstance(message, Mapping):
        return message
    fields: dict[str, Any] = {k: message[k] for k in _MESSAGE_FIELDS if k in message}
    metadata = dict(message.get("metadata") or {})
    metadata.update(
        {new: message[old] for old, new in _MESSAGE_METADATA.items() if message.get(old) is not None}
    )
    content = message.get("content")
    invocations = message.get("toolInvocations") or message.get("tool_invocations") or []
    reasoning = message.get("reasoning")
    if isinstance(content, Mapping):
        parts = [p for p in content.get("parts") or [] if isinstance(p, Mapping)]
        text = content.get("content")
        if not isinstance(text, str) or not text:
            texts = [str(p.get("text", "")) for p in parts if p.get("type") == "text"]
            text = texts[-1] if texts else ""
        fields["content"] = text
        invocations = (
            invocations
            or content.get("toolInvocations")
            or [
                p["toolInvocation"]
                for p in parts
                if p.get("type") == "tool-invocation" and "toolInvocation" in p
            ]
        )
        reasoning = reasoning or content.get("reasoning")
        if not isinstance(reasoning, str):
            reasoning = _reasoning_of_parts(parts)
        if isinstance(content.get("metadata"), Mapping):
            metadata.update(content["metadata"])
    if invocations:
        fields["tool_invocations"] = [snake_keys(inv) for inv in invocations]
    if reasoning:
        fields["reasoning"] = reasoning
    if metadata:
        fields["metadata"] = metadata
    return fields


def _reasoning_of_parts(parts: list[Mapping[str, Any]]) -> str | None:
    texts: list[str] = []
    for part in parts:
        if part.get("type") != "reasoning":
            continue
        details = [d for d in part.get("details") or [] if isinstance(d, Mapping) and d.get("type") == "text"]
        if details:
            texts.append("".join(str(d.get("text", "")) for d in details))
        elif isinstance(part.get("reasoning"), str):
            texts.append(part["reasoning"])
    return "\n".join(texts) if texts else None


def _messages(value: Any) -> Any:
    if isinstance(value, list):
        return [message_from_mastra(m) for m in value]
    return value


def _is_message_list(value: Any) -> bool:
    return (
        isinstance(value, list) and bool(value) and all(isinstance(m, Mapping) and "role" in m for m in value)
    )


def _input(value: Any) -> Any:
    """A ``ScorerRunInputForAgent`` (camelCase keys) or a message list; anything else as it is."""
    if isinstance(value, Mapping) and any(k in value for k in _AGENT_INPUT_KEYS):
        fields = {snake_case(k): _messages(v) for k, v in value.items() if k != "taggedSystemMessages"}
        tagged = value.get("taggedSystemMessages")
        if isinstance(tagged, Mapping):
            fields["tagged_system_messages"] = {tag: _messages(v) for tag, v in tagged.items()}
        return fields
    return _messages(value) if _is_message_list(value) else value


def _output(value: Any) -> Any:
    """The response messages, or a trajectory (keys in snake_case), or anything else as it is."""
    if _is_message_list(value):
        return _messages(value)
    if isinstance(value, Mapping | list):
        return snake_keys(value)
    return value


def run_fields_from_mastra(data: Mapping[str, Any]) -> dict[str, Any]:
    """A Mastra ``ScorerRun`` (``runId``, ``input``, ``output``, ``groundTruth``, ``requestContext``,
    ``expectedTrajectory``, ...) as keyword arguments for :class:`~agentevals.Run`."""
    fields: dict[str, Any] = {}
    for key, value in data.items():
        name = snake_case(str(key))
        if name == "input":
            value = _input(value)
        elif name == "output":
            value = _output(value)
        elif name == "expected_trajectory":
            value = snake_keys(value)
        elif name == "request_context" and value is not None and not isinstance(value, Mapping):
            value = dict(value.entries()) if hasattr(value, "entries") else value
        fields[name] = value
    return fields
