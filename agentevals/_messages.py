"""Canonical message models: what an agent saw and said, with its tool invocations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

Role = Literal["system", "user", "assistant", "tool"]
ToolState = Literal["partial-call", "call", "result", "error"]

_MODEL_CONFIG = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class ToolInvocation(BaseModel):
    """One tool call made by the assistant, with its arguments and (once known) its result.

    ``state`` follows the AI-SDK convention: ``"call"`` (made, no result yet), ``"result"``,
    ``"partial-call"`` (still streaming), plus ``"error"`` for a call whose tool raised.
    Field names are accepted in snake_case or camelCase (``toolCallId``).
    """

    model_config = _MODEL_CONFIG

    tool_call_id: str = ""
    tool_name: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    state: ToolState = "result"
    error: str | None = None
    duration_ms: float | None = None

    @property
    def failed(self) -> bool:
        """True when the tool raised or reported an error."""
        if self.state == "error" or self.error is not None:
            return True
        return isinstance(self.result, Mapping) and bool(self.result.get("error"))


class Message(BaseModel):
    """A chat message with flattened text ``content``.

    Also accepts the shape of Mastra's stored messages (``content`` as an object with ``parts`` /
    ``toolInvocations`` / ``reasoning``) and OpenAI-style content part lists, and flattens them.
    """

    model_config = _MODEL_CONFIG

    role: Role
    content: str = ""
    tool_invocations: list[ToolInvocation] = Field(default_factory=list)
    reasoning: str | None = None
    id: str | None = None
    name: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _flatten_structured_content(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        content = data.get("content")
        if isinstance(content, str) or content is None:
            return data
        fields = dict(data)
        if isinstance(content, Mapping):
            fields.update(_flatten_content_object(content, fields))
        elif isinstance(content, list):
            fields["content"] = _text_of_parts(content)
        return fields


class AgentInput(BaseModel):
    """What an agent received for one run (the seed's ``ScorerRunInputForAgent``).

    ``input_messages`` are the new messages of this call, ``remembered_messages`` the history recalled
    from memory, ``system_messages`` the system prompts, ``tagged_system_messages`` system prompts added
    under a tag (e.g. ``{"memory": [...]}``). Plain strings are accepted where messages are expected.
    """

    model_config = _MODEL_CONFIG

    input_messages: list[Message] = Field(default_factory=list)
    remembered_messages: list[Message] = Field(default_factory=list)
    system_messages: list[Message] = Field(default_factory=list)
    tagged_system_messages: dict[str, list[Message]] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _strings_to_messages(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        fields = dict(data)
        for name, role in _ROLE_OF_FIELD.items():
            if name in fields:
                fields[name] = _as_messages(fields[name], role)
        for name in ("tagged_system_messages", "taggedSystemMessages"):
            if isinstance(fields.get(name), Mapping):
                fields[name] = {k: _as_messages(v, "system") for k, v in fields[name].items()}
        return fields


_DEFAULT_ROLES: dict[str, Role] = {
    "input_messages": "user",
    "remembered_messages": "user",
    "system_messages": "system",
}
_ROLE_OF_FIELD = {alias: role for key, role in _DEFAULT_ROLES.items() for alias in (key, to_camel(key))}


def _as_messages(value: Any, role: Role) -> Any:
    if isinstance(value, str):
        return [{"role": role, "content": value}]
    if isinstance(value, list):
        return [{"role": role, "content": v} if isinstance(v, str) else v for v in value]
    return value


def _text_of_parts(parts: list[Any]) -> str:
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, Mapping) and part.get("type") == "text":
            texts.append(str(part.get("text", "")))
    return "".join(texts)


def _flatten_content_object(content: Mapping[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """Flatten a Mastra ``content`` object (format 2) into our fields."""
    parts = content.get("parts") or []
    text = content.get("content")
    if not isinstance(text, str) or not text:
        texts = [p.get("text", "") for p in parts if isinstance(p, Mapping) and p.get("type") == "text"]
        text = texts[-1] if texts else ""
    invocations = content.get("toolInvocations") or content.get("tool_invocations")
    if not invocations:
        invocations = [
            p["toolInvocation"]
            for p in parts
            if isinstance(p, Mapping) and p.get("type") == "tool-invocation" and "toolInvocation" in p
        ]
    reasoning = content.get("reasoning")
    if not isinstance(reasoning, str):
        reasoning = _reasoning_of_parts(parts)
    out: dict[str, Any] = {"content": text}
    if invocations and not fields.get("tool_invocations") and not fields.get("toolInvocations"):
        out["tool_invocations"] = list(invocations)
    if reasoning and not fields.get("reasoning"):
        out["reasoning"] = reasoning
    return out


def _reasoning_of_parts(parts: list[Any]) -> str | None:
    texts: list[str] = []
    for part in parts:
        if not isinstance(part, Mapping) or part.get("type") != "reasoning":
            continue
        details = part.get("details") or []
        detail_texts = [
            str(d.get("text", "")) for d in details if isinstance(d, Mapping) and d.get("type") == "text"
        ]
        if detail_texts:
            texts.append("".join(detail_texts))
        elif isinstance(part.get("reasoning"), str):
            texts.append(part["reasoning"])
    return "\n".join(texts) if texts else None
