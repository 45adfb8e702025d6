"""``Run``: the one canonical record of what an agent or chain received and produced."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentevals._model._messages import AgentInput, Message


def new_run_id() -> str:
    """A fresh random run id."""
    return str(uuid.uuid4())


class Run(BaseModel):
    """One run to score.

    ``input`` is an :class:`AgentInput` for agents (a scorer's ``type="agent"``), or any value (usually a
    string) for plain functions. ``output`` is the list of messages the agent produced (assistant messages
    carrying their ``tool_invocations``), or any value (usually a string).

    >>> run = Run(input="What is 2+2?", output="4", ground_truth="4")
    >>> run.output_text
    '4'
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    run_id: str = Field(default_factory=new_run_id)
    input: Any = None
    output: Any = None
    ground_truth: Any = None
    request_context: dict[str, Any] = Field(default_factory=dict)
    trace_id: str | None = None
    entity: str | None = None
    context: list[str] = Field(default_factory=list)
    expected_trajectory: Any = None
    error: str | None = None
    started_at: datetime | None = None
    duration_ms: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _reject_unknown_fields(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            known = _known_fields(cls)
            unknown = sorted(str(k) for k in data if k not in known)
            if unknown:
                camel = any(k != k.lower() for k in unknown)
                hint = "; Mastra's camelCase fields and messages are read by Run.from_mastra(...)"
                raise ValueError(
                    f"unknown Run field(s) {unknown}; expected some of {sorted(cls.model_fields)}"
                    + (hint if camel else "")
                )
        return data

    @field_validator("input", mode="before")
    @classmethod
    def _coerce_input(cls, value: Any) -> Any:
        if isinstance(value, AgentInput):
            return value
        if isinstance(value, Mapping) and looks_like_agent_input(value):
            return AgentInput.model_validate(value)
        if _is_message_list(value):
            messages = _as_messages(value)
            return AgentInput(
                input_messages=[m for m in messages if m.role != "system"],
                system_messages=[m for m in messages if m.role == "system"],
            )
        return value

    @field_validator("output", mode="before")
    @classmethod
    def _coerce_output(cls, value: Any) -> Any:
        if _is_message_list(value):
            return _as_messages(value)
        return value

    @field_validator("request_context", "metadata", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("run_id", mode="before")
    @classmethod
    def _run_id_as_text(cls, value: Any) -> Any:
        return new_run_id() if value is None else str(value)

    # -- convenient views -------------------------------------------------------------------------

    @property
    def agent_input(self) -> AgentInput:
        """The input as an :class:`AgentInput` (a plain string becomes one user message)."""
        if isinstance(self.input, AgentInput):
            return self.input
        if self.input is None:
            return AgentInput()
        return AgentInput(input_messages=[Message(role="user", content=_as_text(self.input))])

    @property
    def input_messages(self) -> list[Message]:
        return self.agent_input.input_messages

    @property
    def remembered_messages(self) -> list[Message]:
        return self.agent_input.remembered_messages

    @property
    def system_messages(self) -> list[Message]:
        return self.agent_input.system_messages

    @property
    def tagged_system_messages(self) -> dict[str, list[Message]]:
        return self.agent_input.tagged_system_messages

    @property
    def output_messages(self) -> list[Message]:
        """The output as messages (a plain value becomes one assistant message)."""
        if isinstance(self.output, list) and all(isinstance(m, Message) for m in self.output):
            return self.output
        if self.output is None:
            return []
        return [Message(role="assistant", content=_as_text(self.output))]

    @property
    def input_text(self) -> str:
        """The text of the input messages, joined with newlines (or the plain input as text)."""
        if isinstance(self.input, AgentInput):
            return "\n".join(m.content for m in self.input.input_messages)
        return "" if self.input is None else _as_text(self.input)

    @property
    def output_text(self) -> str:
        """The text of the assistant's messages, joined with newlines (or the plain output as text)."""
        if isinstance(self.output, list) and all(isinstance(m, Message) for m in self.output):
            return "\n".join(m.content for m in self.output if m.role == "assistant" and m.content)
        return "" if self.output is None else _as_text(self.output)

    @classmethod
    def from_messages(cls, messages: Sequence[Any], **fields: Any) -> Run:
        """Build a run from a whole conversation (OpenAI-style dicts or LangChain messages).

        System messages become ``system_messages``; the last user message is the input; earlier turns
        are ``remembered_messages``; everything after the last user message is the output. A bare
        string raises ``TypeError`` (use ``Run(input=..., output=...)`` for plain text).
        """
        from agentevals._model._convert import reject_text, split_conversation, to_messages

        reject_text(messages, "Run.from_messages()")
        agent_input, output = split_conversation(to_messages(messages))
        return cls(input=agent_input, output=output, **fields)

    @classmethod
    def from_mastra(cls, run: Mapping[str, Any] | None = None, /, **fields: Any) -> Run:
        """Build a run from Mastra's shapes: a ``ScorerRun`` dict or its fields as keywords.

        camelCase keys (``runId``, ``groundTruth``, ``requestContext``, ``expectedTrajectory``,
        ``inputMessages``, ``toolCallId``, ``stepType``, ...) and stored messages (``MastraDBMessage``:
        ``createdAt``, ``threadId``, ``resourceId``, ``type``, ``content.parts``, ...) are read here, and
        only here. ``createdAt`` and the other message fields we do not model go to ``metadata``.

        >>> run = Run.from_mastra(
        ...     input={"inputMessages": [{"id": "m1", "role": "user", "createdAt": "2025-01-01T00:00:00Z",
        ...         "content": {"format": 2, "parts": [{"type": "text", "text": "Hi"}]}}]},
        ...     output=[{"id": "m2", "role": "assistant", "threadId": "t1", "type": "text",
        ...         "content": {"format": 2, "parts": [{"type": "text", "text": "Hello!"}]}}],
        ...     groundTruth="Hello!")
        >>> run.input_text, run.output_text, run.ground_truth
        ('Hi', 'Hello!', 'Hello!')
        """
        from agentevals._model._mastra import run_fields_from_mastra

        if run is not None and fields:
            raise TypeError("pass either a Mastra run dict or its fields as keywords, not both")
        return cls(**run_fields_from_mastra(dict(run if run is not None else fields)))


@functools.cache
def _known_fields(model: type[BaseModel]) -> frozenset[str]:
    """The field names ``model`` accepts."""
    return frozenset(model.model_fields)


def coerce_run(run: Run | Mapping[str, Any] | None, fields: Mapping[str, Any]) -> Run:
    """Accept a ``Run``, a mapping of its fields, or the fields as keywords; reject a mix."""
    if run is not None and fields:
        raise TypeError("pass either a Run or its fields as keywords, not both")
    if isinstance(run, Run):
        return run
    if run is None:
        if "output" not in fields:
            raise TypeError("a run needs at least `output=` (and usually `input=`)")
        return Run.model_validate(dict(fields))
    if isinstance(run, Mapping):
        return Run.model_validate(dict(run))
    raise TypeError(
        f"expected a Run, a mapping of Run fields, or keyword arguments; got {type(run).__name__}"
    )


def looks_like_agent_input(value: Mapping[str, Any]) -> bool:
    keys = {"input_messages", "remembered_messages", "system_messages", "tagged_system_messages"}
    return bool(keys.intersection(value))


def _is_message_list(value: Any) -> bool:
    if not isinstance(value, list) or not value:
        return False
    return all(isinstance(m, Message) or (isinstance(m, Mapping) and "role" in m) for m in value)


def _as_messages(values: list[Any]) -> list[Message]:
    """Validated messages; ``Message`` instances are kept as they are (pydantic would return them anyway)."""
    return [m if isinstance(m, Message) else Message.model_validate(m) for m in values]


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Message):
        return value.content
    import json

    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)
