"""What a tool span says of its call: name, call id, arguments, result, error and duration.

GenAI: ``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments``,
``gen_ai.tool.call.result``. OpenInference: ``tool.name``, ``tool_call.id``, ``input.value``,
``output.value`` (a LangChain ``ToolMessage`` there gives its content, call id and status). An error is
the span's error status. Runs on the engine's thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentevals.live import parse_json_text
from agentevals_otel._spans import SpanRecord

_NO_RESULT = object()


@dataclass(slots=True)
class ToolSpan:
    name: str
    call_id: str | None
    args: Any
    result: Any
    error: str | None
    duration_ms: float


def tool_span(record: SpanRecord) -> ToolSpan:
    attributes = record.attributes
    if "gen_ai.tool.name" in attributes or "gen_ai.tool.call.id" in attributes:
        name = attributes.get("gen_ai.tool.name")
        call_id = attributes.get("gen_ai.tool.call.id")
        args = attributes.get("gen_ai.tool.call.arguments")
        result = attributes.get("gen_ai.tool.call.result", _NO_RESULT)
    else:
        name = attributes.get("tool.name")
        call_id = attributes.get("tool_call.id")
        args = attributes.get("input.value")
        result = attributes.get("output.value", _NO_RESULT)
    error = error_text(record)
    message = _tool_message(result)
    if message is not None:  # a LangChain ToolMessage (OpenInference's LangChain instrumentation)
        result = message.get("content")
        call_id = call_id or message.get("tool_call_id")
        if message.get("status") == "error" and error is None:
            error = str(result)
    return ToolSpan(
        name=str(name or record.name),
        call_id=str(call_id) if call_id else None,
        args=_value(args),
        result=None if result is _NO_RESULT else _value(result),
        error=error,
        duration_ms=(record.end_ns - record.start_ns) / 1e6,
    )


def error_text(record: SpanRecord) -> str | None:
    """Why a span failed: its exception event as ``"Type: message"``, else its status description, else
    ``"error"``; ``None`` when its status is not an error."""
    if record.error is None:
        return None
    for name, attributes in record.events:
        if name == "exception":
            kind, message = attributes.get("exception.type"), attributes.get("exception.message")
            return f"{kind}: {message}" if kind else str(message or record.error or "error")
    return record.error or "error"


def _value(value: Any) -> Any:
    return parse_json_text(value) if isinstance(value, str) else value


def _tool_message(result: Any) -> Mapping[str, Any] | None:
    """The fields of a serialized LangChain ``ToolMessage`` (``{"type": "tool", "data": {...}}``)."""
    parsed = _value(result) if isinstance(result, str) and result.startswith("{") else None
    if not isinstance(parsed, dict) or parsed.get("type") != "tool":
        return None
    data = parsed.get("data")
    return data if isinstance(data, dict) else None
