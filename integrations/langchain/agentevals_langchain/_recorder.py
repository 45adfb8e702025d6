"""Run-tree assembly: what one LangChain root run saw and did, turned into one ``agentevals.Run``.

Pure bookkeeping, no callback API: the handler feeds events into a :class:`Trace` (under its lock) and
seals it when the root run ends; the sealed :class:`FinishedRun` builds the ``Run`` when the engine
samples it (:func:`build_run`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from langchain_core.messages import BaseMessage

from agentevals import Message, Run
from agentevals.live import (
    LangChainParts,
    current_trace_context,
    langchain_parts,
    messages_from_langchain,
    messages_from_parts,
    parse_json_text,
)

# Metadata keys LangChain/LangGraph add themselves: not the user's, so not copied into Run.metadata.
_INTERNAL_PREFIXES = ("langgraph_", "ls_", "lc_", "checkpoint_", "__")
_TEXT_KEYS = ("input", "question", "query", "prompt", "text", "user_input")
_OUTPUT_KEYS = ("output", "answer", "text", "result", "content", "response")
GROUND_TRUTH_KEY = "ground_truth"
TRACE_KEY = "otel"


@dataclass(slots=True)
class ToolRecord:
    """One tool run: what it was called with, what it returned or raised, and how long it took."""

    name: str
    args: dict[str, Any]
    tool_call_id: str | None
    started: float
    duration_ms: float | None = None
    result: Any = None
    error: str | None = None


@dataclass(slots=True)
class Trace:
    """Everything captured for one root run while it runs, keyed by the root's run id.

    Child runs are known by a key, the integer of their run id (``run_id.int``). When the root ends,
    :meth:`seal` keeps what :func:`build_run` reads as a :class:`FinishedRun` and this trace is dropped.
    """

    root_id: UUID
    kind: str
    name: str | None
    inputs: Any
    tags: Sequence[str]
    metadata: dict[str, Any]
    started_at: datetime
    t0: float
    run_ids: list[int] = field(default_factory=list)
    first_prompt: list[Any] | None = None
    model_starts: dict[int, tuple[float, str]] = field(default_factory=dict)
    ai_messages: list[Any] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    model_ms: float = 0.0
    model_errors: tuple[str, ...] = ()
    tools: list[ToolRecord] = field(default_factory=list)
    open_tools: dict[int, ToolRecord] = field(default_factory=dict)
    context: tuple[str, ...] = ()
    usage: dict[str, int] = field(default_factory=dict)
    span_settled: bool = False

    # -- events (called under the handler's lock) ------------------------------------------------

    def settle_span(self) -> None:
        """Capture the active OpenTelemetry span again, once: at the first child run's start, or at the
        root's end when it has no child. A tracer whose callback LangChain calls after ours (an
        OpenTelemetry instrumentation adds its handler last) makes the root run's own span current only
        after our start hook ran, so at the root's start the active span is an enclosing one, or none."""
        self.span_settled = True
        context = current_trace_context()
        if context is not None:
            self.metadata[TRACE_KEY] = context

    def model_started(self, key: int, model: str, prompt: list[Any] | None) -> None:
        self.model_starts[key] = (time.perf_counter(), model)
        if self.first_prompt is None and prompt is not None:
            self.first_prompt = list(prompt)

    def model_ended(self, key: int, response: Any) -> None:
        started, model = self.model_starts.pop(key, (None, ""))
        if started is not None:
            self.model_ms += (time.perf_counter() - started) * 1000
        self.models.append(model)
        message = _message_of(response)
        if message is not None:
            self.ai_messages.append(message)
        _add_usage(self.usage, _usage_of(response, message))

    def model_failed(self, key: int, error: BaseException) -> None:
        self.model_starts.pop(key, None)
        self.model_errors = (*self.model_errors, describe(error))

    def tool_started(self, key: int, name: str, args: dict[str, Any], tool_call_id: str | None) -> None:
        record = ToolRecord(name, args, tool_call_id, time.perf_counter())
        self.tools.append(record)
        self.open_tools[key] = record

    def tool_ended(self, key: int, output: Any, error: BaseException | None = None) -> None:
        record = self.open_tools.pop(key, None)
        if record is None:
            return
        record.duration_ms = (time.perf_counter() - record.started) * 1000
        if error is not None:
            record.error = describe(error)
            return
        content = getattr(output, "content", output)  # a ToolMessage when called through a tool call
        record.result = parse_json_text(content) if isinstance(content, str) else content
        if getattr(output, "status", None) == "error":
            record.error = content if isinstance(content, str) else str(content)
        if record.tool_call_id is None:
            record.tool_call_id = getattr(output, "tool_call_id", None)

    def documents_retrieved(self, documents: Sequence[Any]) -> None:
        texts = (getattr(doc, "page_content", doc) for doc in documents)
        self.context = (*self.context, *(t if isinstance(t, str) else str(t) for t in texts))

    # -- the end -----------------------------------------------------------------------------------

    def seal(
        self, outputs: Any, *, error: BaseException | None, entity: str | None, ended: float
    ) -> FinishedRun:
        """What :func:`build_run` needs of this run, now that it ended with ``outputs`` (or ``error``).

        A final state's LangChain messages are kept as plain values (:func:`langchain_parts`), so the
        run waits for scoring without keeping them alive; other outputs are copied (:func:`snapshot`).
        """
        messages = _messages_in(outputs)
        outputs = None if messages is not None else snapshot(outputs)
        prompt = self.first_prompt or []
        # The model's own prompt is the input when the root was a model call, or when the root's inputs
        # are template variables (``{"topic": ...}``) that say less than the rendered prompt.
        own_prompt = messages is None and (
            self.kind in ("llm", "chat_model") or _are_template_variables(self.inputs)
        )
        return FinishedRun(
            root_id=str(self.root_id),
            kind=self.kind,
            entity=entity or self.name,
            # The inputs' messages are in the final state too; other inputs become request_context.
            inputs=None if messages is not None and _messages_in(self.inputs) is not None else self.inputs,
            tags=tuple(self.tags),
            metadata=self.metadata,
            started_at=self.started_at,
            duration_ms=(ended - self.t0) * 1000,
            error=error,
            outputs=outputs,
            final=None if messages is None else _compact(messages),
            system=_compact([m for m in prompt if _is_system(m)]),
            prompt=tuple(prompt) if own_prompt else (),
            ai_messages=tuple(self.ai_messages) if messages is None else (),
            models=tuple(self.models),
            model_ms=self.model_ms,
            model_errors=self.model_errors,
            tools=tuple(self.tools),
            context=self.context,
            usage=self.usage,
        )


def _compact(messages: list[Any]) -> tuple[LangChainParts, ...] | list[Any]:
    """LangChain messages as their plain values (:func:`langchain_parts`); other messages as they are."""
    if not messages:
        return ()
    if all(isinstance(m, BaseMessage) for m in messages):
        return langchain_parts(messages)
    return list(messages)


def _expand(messages: tuple[LangChainParts, ...] | list[Any]) -> list[Message]:
    """The canonical messages of what :func:`_compact` kept."""
    return messages_from_parts(messages) if isinstance(messages, tuple) else _to_messages(messages)


@dataclass(slots=True)
class FinishedRun:
    """A root run that ended, as :meth:`Trace.seal` keeps it until it is scored; calling it builds the
    ``Run`` (:func:`build_run`). ``final`` holds the final state's messages and ``system`` the system
    messages of the first model call, as plain values when they were LangChain's (:func:`_compact`);
    ``prompt`` is the whole first prompt when the root itself was a model call."""

    root_id: str
    kind: str
    entity: str | None
    inputs: Any
    tags: tuple[str, ...]
    metadata: dict[str, Any]
    started_at: datetime
    duration_ms: float
    error: BaseException | None
    outputs: Any
    final: tuple[LangChainParts, ...] | list[Any] | None
    system: tuple[LangChainParts, ...] | list[Any]
    prompt: tuple[Any, ...]
    ai_messages: tuple[Any, ...]
    models: tuple[str, ...]
    model_ms: float
    model_errors: tuple[str, ...]
    tools: tuple[ToolRecord, ...]
    context: tuple[str, ...]
    usage: dict[str, int]

    def __call__(self) -> Run:
        return build_run(self)


def describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def build_run(finished: FinishedRun) -> Run:
    """The one ``Run`` for a root run that ended (see :meth:`Trace.seal`)."""
    metadata: dict[str, Any] = {
        k: v
        for k, v in finished.metadata.items()
        if not k.startswith(_INTERNAL_PREFIXES) and k != GROUND_TRUTH_KEY
    }
    metadata.update(
        tags=list(finished.tags),
        usage=dict(finished.usage),
        model_calls=len(finished.models),
        models=sorted(set(filter(None, finished.models))),
        tool_calls=len(finished.tools),
        timings={
            "model_ms": round(finished.model_ms, 3),
            "tool_ms": round(sum(t.duration_ms or 0.0 for t in finished.tools), 3),
        },
    )
    if finished.model_errors:
        metadata["model_errors"] = list(finished.model_errors)
    error = finished.error
    fields: dict[str, Any] = {
        "run_id": finished.root_id,
        "trace_id": finished.root_id,
        "entity": finished.entity,
        "context": list(finished.context),
        "error": None if error is None else describe(error),
        "started_at": finished.started_at,
        "duration_ms": finished.duration_ms,
        "metadata": metadata,
        "ground_truth": finished.metadata.get(GROUND_TRUTH_KEY),
    }
    inputs = finished.inputs
    if isinstance(inputs, Mapping) and not _messages_in(inputs):
        fields["request_context"] = {"inputs": _jsonable(inputs)}
    conversation = _conversation(finished)
    if conversation is None:  # nothing message-like on either side (e.g. a bare retriever run)
        return Run(input=_jsonable(inputs), output=_jsonable(finished.outputs), **fields)
    return Run.from_messages(conversation, **fields)


def run_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """A run's metadata at its start: the caller's, plus the active OpenTelemetry span's ids under
    ``"otel"`` (so that evaluation events land on that span)."""
    captured = dict(metadata) if isinstance(metadata, Mapping) else {}
    context = current_trace_context()
    if context is not None:
        captured[TRACE_KEY] = context
    return captured


def snapshot(value: Any) -> Any:
    """``value`` with its top-level lists copied (a dict's too), so later appends by the caller (a chat
    loop reusing its message list) do not reach a run that is built later."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return {k: list(v) if isinstance(v, list) else v for k, v in value.items()}
    return value


def _conversation(finished: FinishedRun) -> list[Message] | None:
    system = _expand(finished.system)
    if finished.final is not None:  # a LangGraph / create_agent root: the final state holds the conversation
        # Converted apart: the state may hold agentevals Messages, the prompt LangChain ones.
        messages = _expand(finished.final)
        if system and not any(m.role == "system" for m in messages):
            messages = [*system, *messages]
        _fill_tool_results(messages, finished.tools)
        return messages
    inputs = _input_messages(finished)
    if inputs is None:
        return None
    if system and not any(m.role == "system" for m in inputs):
        inputs = [*system, *inputs]
    replies = _to_messages(finished.ai_messages)
    _fill_tool_results(replies, finished.tools)
    final_text = _output_text(finished.outputs)
    last = next((m for m in reversed(replies) if m.role == "assistant"), None)
    if final_text is not None and (last is None or last.content != final_text):
        replies.append(Message(role="assistant", content=final_text))
    return [*inputs, *replies]


def _input_messages(finished: FinishedRun) -> list[Message] | None:
    inputs = finished.inputs
    if finished.prompt:
        return _to_messages(finished.prompt)
    found = _messages_in(inputs)
    if found is not None:
        return _to_messages(found)
    if hasattr(inputs, "to_messages"):  # a PromptValue
        return _to_messages(inputs.to_messages())
    text = _input_text(inputs)
    return None if text is None else [Message(role="user", content=text)]


def _are_template_variables(inputs: Any) -> bool:
    """Whether a chain's inputs are prompt variables: a mapping with no messages and no question-like key."""
    return (
        isinstance(inputs, Mapping)
        and bool(inputs)
        and _messages_in(inputs) is None
        and not any(isinstance(inputs.get(key), str) for key in _TEXT_KEYS)
    )


def _input_text(inputs: Any) -> str | None:
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, Mapping):
        for key in _TEXT_KEYS:
            if isinstance(inputs.get(key), str):
                return str(inputs[key])
        texts = [v for v in inputs.values() if isinstance(v, str)]
        if len(texts) == 1:
            return texts[0]
        return json.dumps(_jsonable(inputs), ensure_ascii=False) if inputs else None
    return None


def _output_text(outputs: Any) -> str | None:
    if isinstance(outputs, str):
        return outputs
    content = getattr(outputs, "content", None)
    if isinstance(content, str) and hasattr(outputs, "type"):
        return content
    if isinstance(outputs, Mapping):
        for key in _OUTPUT_KEYS:
            value = outputs.get(key)
            if isinstance(value, str):
                return value
            content = getattr(value, "content", None)
            if isinstance(content, str):
                return content
    return None


def _messages_in(value: Any) -> list[Any] | None:
    """The message list in ``value`` (a state dict's ``messages``, or a list of messages), if any."""
    if isinstance(value, Mapping):
        value = value.get("messages")
    if isinstance(value, list) and value and all(_is_message_like(m) for m in value):
        return value
    return None


def _is_message_like(value: Any) -> bool:
    if isinstance(value, BaseMessage | Message):
        return True
    if isinstance(value, Mapping):
        return "role" in value or ("type" in value and "content" in value)
    if isinstance(value, tuple):
        return len(value) == 2 and isinstance(value[0], str)
    return hasattr(value, "content") and hasattr(value, "type")


def _is_system(message: Any) -> bool:
    if isinstance(message, Message):
        return message.role == "system"
    if isinstance(message, Mapping):
        return message.get("role") in ("system", "developer")
    if isinstance(message, tuple):
        return bool(message[0] == "system")
    return getattr(message, "type", None) == "system"


def _to_messages(messages: Sequence[Any]) -> list[Message]:
    items = list(messages)
    if not items:
        return []
    if all(isinstance(m, Message) for m in items):
        return [m.model_copy(deep=True) for m in items]
    return messages_from_langchain(items)


def _fill_tool_results(messages: list[Message], tools: Sequence[ToolRecord]) -> None:
    """Add what only the callbacks know (duration, raised errors, results) to the tool invocations."""
    by_call_id = {t.tool_call_id: t for t in tools if t.tool_call_id}
    matched: set[str] = set()
    for message in messages:
        for inv in message.tool_invocations:
            record = by_call_id.get(inv.tool_call_id)
            if record is None:
                continue
            matched.add(inv.tool_call_id)
            inv.duration_ms = record.duration_ms
            if record.error is not None:
                inv.state, inv.error = "error", record.error
            elif inv.state == "call" and record.duration_ms is not None:
                inv.state, inv.result = "result", record.result
    unmatched = [t for t in tools if t.tool_call_id not in matched]
    if not unmatched:
        return
    from agentevals import ToolInvocation

    target = next((m for m in reversed(messages) if m.role == "assistant"), None)
    if target is None:
        target = Message(role="assistant")
        messages.append(target)
    for t in unmatched:  # tools run directly by a chain, not through a model's tool call
        target.tool_invocations.append(
            ToolInvocation(
                tool_call_id=t.tool_call_id or "",
                tool_name=t.name,
                args=t.args,
                result=t.result,
                state="error" if t.error else ("result" if t.duration_ms is not None else "call"),
                error=t.error,
                duration_ms=t.duration_ms,
            )
        )


def _message_of(response: Any) -> Any:
    generations = getattr(response, "generations", None)
    if not generations or not generations[0]:
        return None
    generation = generations[0][0]
    message = getattr(generation, "message", None)
    if message is not None:
        return message
    from langchain_core.messages import AIMessage

    return AIMessage(content=getattr(generation, "text", ""))


def _usage_of(response: Any, message: Any) -> dict[str, int]:
    usage = getattr(message, "usage_metadata", None)
    if isinstance(usage, Mapping):
        return {k: int(v) for k, v in usage.items() if isinstance(v, int)}
    llm_output = getattr(response, "llm_output", None) or {}
    raw = llm_output.get("token_usage") or llm_output.get("usage") or {}
    if not isinstance(raw, Mapping):
        return {}
    mapping = {"prompt_tokens": "input_tokens", "completion_tokens": "output_tokens"}
    return {mapping.get(str(k), str(k)): int(v) for k, v in raw.items() if isinstance(v, int)}


def _add_usage(total: dict[str, int], usage: Mapping[str, int]) -> None:
    for key, value in usage.items():
        total[key] = total.get(key, 0) + value


def _jsonable(value: Any) -> Any:
    """A JSON-friendly copy (documents and messages become text) so sinks can store it."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    text = getattr(value, "page_content", None) or getattr(value, "content", None)
    return text if isinstance(text, str) else str(value)
