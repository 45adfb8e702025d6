"""What the fake server receives (:class:`ChatRequest`) and answers (:class:`Reply`, :class:`ToolCall`)."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True)
class ToolCall:
    """One tool call in a scripted reply of the agent's model.

    >>> ToolCall("get_weather", {"city": "Paris"}).arguments
    {'city': 'Paris'}
    """

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=_call_id)

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("ToolCall needs the name of the tool to call, e.g. ToolCall('search', {...})")
        try:
            json.dumps(dict(self.arguments))
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"ToolCall {self.name!r}: arguments must be a JSON-serialisable mapping ({exc}); "
                "pass plain str, number, bool, list and dict values"
            ) from exc

    @property
    def arguments_json(self) -> str:
        return json.dumps(dict(self.arguments))


@dataclass(frozen=True)
class Reply:
    """One scripted reply: text content, tool calls, an HTTP error status, a delay, or a raw body.
    ``finish_reason`` is sent as given (``"length"``: a reply cut off at the token cap), else ``"stop"``,
    or ``"tool_calls"`` for tool calls.

    >>> Reply.json({"score": 1.0}).content
    '{"score": 1.0}'
    >>> Reply.tool_call("get_weather", city="Paris").tool_calls[0].arguments
    {'city': 'Paris'}
    """

    content: str | None = ""
    status: int = 200
    delay: float = 0.0
    raw_body: str | None = None
    prompt_tokens: int = 12
    completion_tokens: int = 8
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None

    @classmethod
    def text(cls, content: str) -> Reply:
        return cls(content=content)

    @classmethod
    def json(cls, value: Any) -> Reply:
        return cls(content=json.dumps(value))

    @classmethod
    def tool_call(cls, name: str, arguments: Mapping[str, Any] | None = None, /, **kwargs: Any) -> Reply:
        """A reply calling one tool, with ``arguments`` and/or keyword arguments (several calls:
        ``Reply(content=None, tool_calls=(ToolCall(...), ToolCall(...)))``)."""
        return cls(content=None, tool_calls=(ToolCall(name, {**(arguments or {}), **kwargs}),))

    @classmethod
    def error(cls, status: int, message: str = "fake error") -> Reply:
        body = json.dumps({"error": {"message": message, "type": "fake_error", "code": status}})
        return cls(status=status, raw_body=body)

    @classmethod
    def rate_limited(cls) -> Reply:
        return cls.error(429, "Rate limit reached (fake)")

    @classmethod
    def server_error(cls) -> Reply:
        return cls.error(500, "Internal server error (fake)")

    @classmethod
    def slow(cls, seconds: float, then: ReplyLike = "") -> Reply:
        return dataclasses.replace(as_reply(then), delay=seconds)

    @classmethod
    def malformed(cls, content: str = '{"verdicts": [ this is not json') -> Reply:
        return cls(content=content)


ReplyLike = Reply | str | Mapping[str, Any] | list[Any]
"""A :class:`Reply`, a text reply (``str``) or a JSON reply (a mapping or a list)."""


def as_reply(value: ReplyLike) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return Reply.text(value)
    return Reply.json(value)


@dataclass(frozen=True)
class ChatRequest:
    """A chat-completions request the server received: its JSON body and its headers.

    ``headers`` has lower-case names and is left out of the repr (it holds the ``authorization``).
    """

    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def system(self) -> str:
        return next((str(m.get("content")) for m in self.messages if m.get("role") == "system"), "")

    @property
    def prompt(self) -> str:
        """The last user message's text (an Ollama ``/api/generate`` request's ``prompt``)."""
        users = [m for m in self.messages if m.get("role") == "user"]
        return str(users[-1].get("content", "")) if users else str(self.body.get("prompt", ""))

    @property
    def step_prompt(self) -> str:
        """A judge request's prompt: the first user message's text, also on a retry, which follows it with
        the invalid reply and what was wrong with it (:attr:`prompt` is then that last message)."""
        users = [m for m in self.messages if m.get("role") == "user"]
        return str(users[0].get("content", "")) if users else self.prompt

    @property
    def tool_results(self) -> list[str]:
        """The texts of the tool messages since the last user message (what the agent's tools returned)."""
        results: list[str] = []
        for message in self.messages:
            if message.get("role") == "user":
                results = []
            elif message.get("role") == "tool":
                results.append(str(message.get("content", "")))
        return results

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))


Responder = Callable[[ChatRequest], ReplyLike]
