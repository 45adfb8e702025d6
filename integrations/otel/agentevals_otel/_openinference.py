"""Messages, tool calls and documents in OpenInference's flattened attributes, as OpenAI-style dicts.

``llm.input_messages.N.message.role`` / ``.content`` / ``.contents.M.message_content.text`` /
``.tool_calls.K.tool_call.id`` / ``.tool_call.function.name`` / ``.tool_call.function.arguments`` /
``.tool_call_id`` / ``.name`` (the same under ``llm.output_messages``), and
``retrieval.documents.N.document.content``. Runs on the engine's thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentevals_otel._genai import OpenAIMessage, arguments, tool_message

INPUT_PREFIX = "llm.input_messages."
OUTPUT_PREFIX = "llm.output_messages."
DOCUMENTS_PREFIX = "retrieval.documents."


def messages(attributes: Mapping[str, Any], prefix: str) -> list[OpenAIMessage]:
    """The messages flattened under ``prefix`` (:data:`INPUT_PREFIX` or :data:`OUTPUT_PREFIX`), in
    index order (indices may skip numbers)."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix) :].partition(".")
        if not index.isdigit() or not rest.startswith("message."):
            continue
        found.setdefault(int(index), {})[rest[len("message.") :]] = value
    return [_message(found[index]) for index in sorted(found)]


def has_messages(attributes: Mapping[str, Any]) -> bool:
    return f"{INPUT_PREFIX}0.message.role" in attributes or f"{OUTPUT_PREFIX}0.message.role" in attributes


def documents(attributes: Mapping[str, Any]) -> list[str]:
    """The retrieved documents' texts, in index order."""
    found: dict[int, str] = {}
    for key, value in attributes.items():
        if key.startswith(DOCUMENTS_PREFIX) and key.endswith(".document.content"):
            index = key[len(DOCUMENTS_PREFIX) :].partition(".")[0]
            if index.isdigit():
                found[int(index)] = str(value)
    return [found[index] for index in sorted(found)]


def _message(fields: Mapping[str, Any]) -> OpenAIMessage:
    role = str(fields.get("role") or "user")
    content = fields.get("content")
    if content is None:
        content = _contents_text(fields) or None
    if role == "tool":
        return tool_message(fields.get("tool_call_id"), content, fields.get("name"))
    message: OpenAIMessage = {"role": role, "content": content, "name": fields.get("name")}
    calls = _tool_calls(fields)
    if calls:
        message["tool_calls"] = calls
    return message


def _contents_text(fields: Mapping[str, Any]) -> str:
    """The text parts of ``contents.M.message_content.*``, joined."""
    texts: dict[int, str] = {}
    for key, value in fields.items():
        if key.startswith("contents.") and key.endswith(".message_content.text"):
            index = key[len("contents.") :].partition(".")[0]
            if index.isdigit():
                texts[int(index)] = str(value)
    return "".join(texts[index] for index in sorted(texts))


def _tool_calls(fields: Mapping[str, Any]) -> list[dict[str, Any]]:
    calls: dict[int, dict[str, Any]] = {}
    for key, value in fields.items():
        if not key.startswith("tool_calls."):
            continue
        index, _, rest = key[len("tool_calls.") :].partition(".")
        if index.isdigit():
            calls.setdefault(int(index), {})[rest] = value
    return [
        {
            "id": str(call.get("tool_call.id") or ""),
            "type": "function",
            "function": {
                "name": str(call.get("tool_call.function.name") or ""),
                "arguments": arguments(call.get("tool_call.function.arguments")),
            },
        }
        for call in (calls[index] for index in sorted(calls))
    ]
