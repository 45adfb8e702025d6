"""Messages in the GenAI semantic conventions, as OpenAI-style message dicts.

Two forms: JSON in span attributes (``gen_ai.input.messages``, ``gen_ai.output.messages``,
``gen_ai.system_instructions``: messages made of typed ``parts``), and the older span events
(``gen_ai.system.message``, ``gen_ai.user.message``, ``gen_ai.assistant.message``, ``gen_ai.tool.message``,
``gen_ai.choice``), one message each. Runs on the engine's thread.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agentevals_otel._spans import Event
from agentevals_otel._tally import Tally

INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
# pydantic-ai's whole conversation of an agent run, on its agent span (same message form)
ALL_MESSAGES = "pydantic_ai.all_messages"

_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
_CHOICE = "gen_ai.choice"
_REASONING_PARTS = ("reasoning", "thinking")

OpenAIMessage = dict[str, Any]


def loads(value: Any, what: str, tally: Tally) -> Any:
    """``value`` parsed when it is JSON text, as it is otherwise; ``None`` (counted) when it is text
    that does not parse."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        tally.note(f"invalid JSON in {what}", f"{what} is not JSON: {value[:80]!r}")
        return None


def messages(value: Any, what: str, tally: Tally) -> list[OpenAIMessage]:
    """The messages of a ``gen_ai.*.messages`` attribute."""
    return converted(message_list(value, what, tally), tally)


def message_list(value: Any, what: str, tally: Tally) -> list[dict[str, Any]]:
    """The GenAI messages of a ``gen_ai.*.messages`` attribute, parsed but not converted."""
    parsed = loads(value, what, tally)
    if parsed is None:
        return []
    if not isinstance(parsed, list) or not all(isinstance(m, dict) for m in parsed):
        tally.note(f"unexpected shape of {what}", f"{what} is not a list of messages")
        return []
    return parsed


def converted(parsed: list[dict[str, Any]], tally: Tally) -> list[OpenAIMessage]:
    """GenAI messages as OpenAI-style messages."""
    return [item for message in parsed for item in _message(message, tally)]


def system_messages(value: Any, tally: Tally) -> list[OpenAIMessage]:
    """One system message per text part of ``gen_ai.system_instructions`` (or its plain text)."""
    if isinstance(value, str) and not value.lstrip().startswith(("[", "{", '"')):
        return [{"role": "system", "content": value}]
    parsed = loads(value, SYSTEM_INSTRUCTIONS, tally)
    if isinstance(parsed, str):
        return [{"role": "system", "content": parsed}]
    if not isinstance(parsed, list):
        return []
    texts = [_part_text(part) for part in parsed]
    return [{"role": "system", "content": text} for text in texts if text is not None]


def event_messages(events: Sequence[Event], tally: Tally) -> tuple[list[OpenAIMessage], list[OpenAIMessage]]:
    """The input and output messages of a model span in the event form: one event per message, and a
    ``gen_ai.choice`` event per output."""
    inputs: list[OpenAIMessage] = []
    outputs: list[OpenAIMessage] = []
    for name, attributes in events:
        role = _EVENT_ROLES.get(name)
        if role is not None:
            inputs.append(_event_message(role, attributes, tally))
        elif name == _CHOICE:
            body = loads(attributes.get("message"), "gen_ai.choice message", tally)
            if not isinstance(body, Mapping):
                body = attributes
            outputs.append(_event_message(str(body.get("role") or "assistant"), body, tally))
    return inputs, outputs


def has_event_messages(events: Sequence[Event]) -> bool:
    return any(name in _EVENT_ROLES or name == _CHOICE for name, _ in events)


def _event_message(role: str, body: Mapping[str, Any], tally: Tally) -> OpenAIMessage:
    content = body.get("content")
    if role == "tool":
        return tool_message(body.get("id") or body.get("tool_call_id"), content, body.get("name"))
    message: OpenAIMessage = {"role": role, "content": content if isinstance(content, str) else None}
    calls = loads(body.get("tool_calls"), f"{role} message tool_calls", tally)
    if isinstance(calls, list):
        message["tool_calls"] = [_openai_call(call) for call in calls if isinstance(call, dict)]
    return message


def _message(message: Mapping[str, Any], tally: Tally) -> list[OpenAIMessage]:
    """One GenAI message as OpenAI-style messages: tool results become ``role="tool"`` messages."""
    role = str(message.get("role") or "user")
    parts = message.get("parts")
    if not isinstance(parts, list):  # a message with plain content
        return [{"role": role, "content": message.get("content"), "name": message.get("name")}]
    converted: list[OpenAIMessage] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    reasoning: list[str] = []

    def close_text() -> None:
        if texts or calls or reasoning:
            item: OpenAIMessage = {"role": role, "content": "".join(texts) or None}
            if calls:
                item["tool_calls"] = list(calls)
            if reasoning:
                item["reasoning_content"] = "\n".join(reasoning)
            converted.append(item)
            texts.clear()
            calls.clear()
            reasoning.clear()

    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            texts.append(str(part.get("content") or ""))
        elif kind == "tool_call":
            calls.append(_genai_call(part))
        elif kind == "tool_call_response":
            close_text()
            result = part["response"] if "response" in part else part.get("result")
            converted.append(tool_message(part.get("id"), result, part.get("name")))
        elif kind in _REASONING_PARTS:
            reasoning.append(str(part.get("content") or ""))
        else:
            tally.note(f"genai part {kind}", f"a message part of type {kind!r} is left out of the run")
    close_text()
    return converted


def tool_message(tool_call_id: Any, result: Any, name: Any = None) -> OpenAIMessage:
    """A ``role="tool"`` message; a result that is a list travels as JSON text (a list content would be
    read as content parts)."""
    content = json.dumps(result, ensure_ascii=False) if isinstance(result, list) else result
    return {"role": "tool", "tool_call_id": str(tool_call_id or ""), "content": content, "name": name}


def _genai_call(part: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": str(part.get("id") or ""),
        "type": "function",
        "function": {"name": str(part.get("name") or ""), "arguments": arguments(part.get("arguments"))},
    }


def _openai_call(call: Mapping[str, Any]) -> dict[str, Any]:
    function = call.get("function")
    if not isinstance(function, dict):
        function = call
    return {
        "id": str(call.get("id") or ""),
        "type": "function",
        "function": {
            "name": str(function.get("name") or ""),
            "arguments": arguments(function.get("arguments")),
        },
    }


def arguments(value: Any) -> Mapping[str, Any] | str:
    """Tool-call arguments as a mapping or JSON text (what the converter reads)."""
    if value is None:
        return {}
    if isinstance(value, dict | str):  # JSON's own types (an ABC check costs microseconds)
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and part.get("type", "text") == "text":
        return str(part.get("content") or "")
    return None
