"""Canonical message models: what an agent saw and said, with its tool invocations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Role = Literal["system", "user", "assistant", "tool"]
ToolState = Literal["partial-call", "call", "result", "error"]

_MODEL_CONFIG = ConfigDict(extra="forbid")


class ToolInvocation(BaseModel):
    """One tool call made by the assistant, with its arguments and (once known) its result.

    ``state`` follows the AI-SDK convention: ``"call"`` (made, no result yet), ``"result"``,
    ``"partial-call"`` (still streaming), plus ``"error"`` for a call whose tool raised.
    (Mastra's camelCase spelling, ``toolCallId``, is read by ``Run.from_mastra``.)
    """

    model_config = _MODEL_CONFIG

    tool_call_id: str = ""
    tool_name: str
    args: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    state: ToolState = "result"
    error: str | None = None
    duration_ms: float | None = None

    @model_validator(mode="after")
    def _no_placeholder_result(self) -> ToolInvocation:
        # A call that never returned has no result; some recorders store an empty placeholder.
        empty = isinstance(self.result, dict | list | str) and not self.result
        if empty and self.state in ("call", "partial-call"):
            self.result = None
        return self

    @property
    def finished(self) -> bool:
        """True once the tool returned or raised (state ``"result"`` or ``"error"``)."""
        return self.state in ("result", "error")

    @property
    def failed(self) -> bool:
        """True when the tool raised or reported an error."""
        if self.state == "error" or self.error is not None:
            return True
        return isinstance(self.result, Mapping) and bool(self.result.get("error"))


class Message(BaseModel):
    """A chat message with flattened text ``content``.

    OpenAI-style content part lists are flattened to their text. Mastra's stored messages
    (``content`` as an object with ``parts``, ``createdAt``, ...) are read by ``Run.from_mastra``.
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
        if isinstance(content, Mapping):
            raise ValueError(
                "content must be text or a list of content parts; a content object (Mastra's stored "
                "messages) is read by Run.from_mastra(...)"
            )
        fields = dict(data)
        if isinstance(content, list):
            fields["content"] = _text_of_parts(content)
        return fields


class AgentInput(BaseModel):
    """What an agent received for one run.

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
        for name, role in _DEFAULT_ROLES.items():
            if name in fields:
                fields[name] = _as_messages(fields[name], role)
        if isinstance(fields.get("tagged_system_messages"), Mapping):
            tagged = fields["tagged_system_messages"]
            fields["tagged_system_messages"] = {k: _as_messages(v, "system") for k, v in tagged.items()}
        return fields


_DEFAULT_ROLES: dict[str, Role] = {
    "input_messages": "user",
    "remembered_messages": "user",
    "system_messages": "system",
}


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
