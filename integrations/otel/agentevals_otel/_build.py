"""One ``Run`` from the spans of one agent invocation, built on the engine's thread when it is sampled.

The run's own spans are its agent span and everything under it except what runs inside a tool (an agent
called as a tool is the tool's business). The conversation is the longest of: pydantic-ai's whole
conversation on the agent span (``pydantic_ai.all_messages``), and the last model call's instructions,
input and output; tool spans add durations, errors and missing results to the calls they match (by call
id, else by name in order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agentevals import Message, Run, ToolInvocation
from agentevals.live import messages_from_openai
from agentevals_otel import _genai as genai
from agentevals_otel import _openinference as openinference
from agentevals_otel._spans import AGENT, CHAIN, MODEL, RETRIEVER, TOOL, SpanRecord
from agentevals_otel._tally import Tally
from agentevals_otel._tool_spans import ToolSpan, error_text, tool_span

GROUND_TRUTH = "agentevals.ground_truth"
METADATA_PREFIX = "agentevals.metadata."
_USER_PREFIX = "agentevals."  # what both names start with
TRACE_KEY = "otel"
_AGENT_NAMES = ("gen_ai.agent.name", "agent.name")
_FINAL_OUTPUT = "final_result"  # pydantic-ai's output of an agent run, on its agent span


class UnreadableRun(ValueError):
    """The spans of a run hold no conversation and no input or output this processor can read."""


@dataclass(frozen=True, slots=True)
class CapturedRun:
    """The spans of one run (its agent span first) as they ended; calling it builds the ``Run``."""

    records: tuple[SpanRecord, ...]
    trace_id: int
    trace_flags: int
    baggage: Mapping[str, str]
    entity: str | None
    tally: Tally

    def __call__(self) -> Run:
        return build_run(self)


def build_run(captured: CapturedRun) -> Run:
    """The ``Run`` of ``captured`` (raises :class:`UnreadableRun`, counted, when there is nothing to
    read)."""
    top = captured.records[0]
    own = own_spans(captured.records)
    models = sorted((r for r in own if r.role == MODEL), key=lambda r: r.end_ns)  # the last one ended last
    tools = [tool_span(r) for r in own if r.role == TOOL and r is not top]
    ground_truth, user_metadata = _user_fields(captured)
    fields: dict[str, Any] = {
        "run_id": f"{top.span_id:016x}",
        "trace_id": f"{captured.trace_id:032x}",
        "entity": captured.entity or _entity(top, own),
        "error": error_text(top),
        "started_at": datetime.fromtimestamp(top.start_ns / 1e9, UTC),
        "duration_ms": (top.end_ns - top.start_ns) / 1e6,
        "ground_truth": ground_truth,
        "context": [doc for r in own if r.role == RETRIEVER for doc in openinference.documents(r.attributes)],
        "metadata": {**user_metadata, **_run_metadata(captured, top, models, tools)},
    }
    conversation = _conversation(top, models, captured.tally)
    if not conversation:
        inputs, outputs = top.attributes.get("input.value"), top.attributes.get("output.value")
        if inputs is None and outputs is None:
            captured.tally.note("no conversation", f"span {top.name!r} holds no messages, input or output")
            raise UnreadableRun(f"the spans under {top.name!r} hold no messages, input or output to score")
        return Run(input=inputs, output=outputs, **fields)
    messages = messages_from_openai(conversation)
    _fill_tool_calls(messages, tools)
    _add_final_output(messages, top)
    return Run.from_messages(messages, **fields)


def own_spans(records: Sequence[SpanRecord]) -> list[SpanRecord]:
    """``records[0]`` and the spans under it, without looking inside tool spans, in start order."""
    children: dict[int, list[SpanRecord]] = {}
    for record in records[1:]:
        children.setdefault(record.parent_id, []).append(record)
    own, pending = [], [records[0]]
    while pending:
        record = pending.pop()
        own.append(record)
        if record.role != TOOL or record is records[0]:
            pending.extend(children.get(record.span_id, ()))
    return sorted(own, key=lambda r: r.start_ns)


def _conversation(top: SpanRecord, models: Sequence[SpanRecord], tally: Tally) -> list[genai.OpenAIMessage]:
    """The longest of pydantic-ai's whole conversation and the last model call's exchange (both parsed,
    only the one kept converted); the agent span's own exchange when there is no model call."""
    attributes = top.attributes
    whole = (
        genai.message_list(attributes[genai.ALL_MESSAGES], genai.ALL_MESSAGES, tally)
        if genai.ALL_MESSAGES in attributes
        else []
    )
    last = models[-1] if models else top
    if whole and (genai.INPUT_MESSAGES in last.attributes or genai.OUTPUT_MESSAGES in last.attributes):
        inputs = genai.message_list(
            last.attributes.get(genai.INPUT_MESSAGES, "[]"), genai.INPUT_MESSAGES, tally
        )
        outputs = genai.message_list(
            last.attributes.get(genai.OUTPUT_MESSAGES, "[]"), genai.OUTPUT_MESSAGES, tally
        )
        if len(inputs) + len(outputs) > len(whole):
            system = genai.system_messages(last.attributes.get(genai.SYSTEM_INSTRUCTIONS), tally)
            return system + genai.converted(inputs + outputs, tally)
    if whole:
        return genai.system_messages(attributes.get(genai.SYSTEM_INSTRUCTIONS), tally) + genai.converted(
            whole, tally
        )
    return _model_exchange(last, tally) or (_model_exchange(top, tally) if last is not top else [])


def _model_exchange(record: SpanRecord, tally: Tally) -> list[genai.OpenAIMessage]:
    """The instructions, input and output messages a model span (or an agent span) carries."""
    attributes = record.attributes
    system = genai.system_messages(attributes.get(genai.SYSTEM_INSTRUCTIONS), tally)
    if genai.INPUT_MESSAGES in attributes or genai.OUTPUT_MESSAGES in attributes:
        inputs = genai.messages(attributes.get(genai.INPUT_MESSAGES, "[]"), genai.INPUT_MESSAGES, tally)
        outputs = genai.messages(attributes.get(genai.OUTPUT_MESSAGES, "[]"), genai.OUTPUT_MESSAGES, tally)
    elif openinference.has_messages(attributes):
        inputs = openinference.messages(attributes, openinference.INPUT_PREFIX)
        outputs = openinference.messages(attributes, openinference.OUTPUT_PREFIX)
    elif genai.has_event_messages(record.events):
        inputs, outputs = genai.event_messages(record.events, tally)
    else:
        if record.role == MODEL:
            tally.note("model span without messages", f"model span {record.name!r} carries no messages")
        return []
    return [*system, *inputs, *outputs]


def _fill_tool_calls(messages: list[Message], tools: Sequence[ToolSpan]) -> None:
    """Add what the tool spans know (duration, error, a result the conversation lacks) to the calls they
    match: by call id, then the calls left by name, in order."""
    pending = list(tools)
    by_name: list[ToolInvocation] = []
    for invocation in (inv for m in messages if m.role == "assistant" for inv in m.tool_invocations):
        span = next((t for t in pending if t.call_id and t.call_id == invocation.tool_call_id), None)
        if span is None:
            by_name.append(invocation)
        else:
            pending.remove(span)
            _apply(invocation, span)
    for invocation in by_name:
        span = next((t for t in pending if t.name == invocation.tool_name), None)
        if span is not None:
            pending.remove(span)
            _apply(invocation, span)


def _apply(invocation: ToolInvocation, span: ToolSpan) -> None:
    invocation.duration_ms = span.duration_ms
    if span.error is not None:
        invocation.state, invocation.error = "error", span.error
    elif invocation.state in ("call", "partial-call") and span.result is not None:
        invocation.state, invocation.result = "result", span.result


def _add_final_output(messages: list[Message], top: SpanRecord) -> None:
    """A structured output (pydantic-ai's output tool) ends the conversation as an assistant message
    with its JSON, so that scorers of the output text see it."""
    final = top.attributes.get(_FINAL_OUTPUT)
    last = messages[-1] if messages else None
    if isinstance(final, str) and last is not None and last.role == "assistant" and not last.content:
        messages.append(Message(role="assistant", content=final))


def _entity(top: SpanRecord, own: Sequence[SpanRecord]) -> str | None:
    for record in (top, *(r for r in own if r.role == AGENT)):
        for key in _AGENT_NAMES:
            name = record.attributes.get(key)
            if name:
                return str(name)
    return top.name if top.role in (AGENT, CHAIN) else None


def _user_fields(captured: CapturedRun) -> tuple[Any, dict[str, Any]]:
    """The ground truth and metadata set through baggage, then span attributes (the agent span's last,
    so they win)."""
    sources: list[Mapping[str, Any]] = [captured.baggage, *(r.attributes for r in reversed(captured.records))]
    ground_truth: Any = None
    metadata: dict[str, Any] = {}
    for source in sources:
        for key in source:  # the keys alone: a span's attribute mapping reads each value in Python
            if not key.startswith(_USER_PREFIX):
                continue
            value = source[key]
            if key == GROUND_TRUTH:
                ground_truth = list(value) if isinstance(value, tuple) else value
            elif key.startswith(METADATA_PREFIX):
                metadata[key[len(METADATA_PREFIX) :]] = list(value) if isinstance(value, tuple) else value
    return ground_truth, metadata


def _run_metadata(
    captured: CapturedRun, top: SpanRecord, models: Sequence[SpanRecord], tools: Sequence[ToolSpan]
) -> dict[str, Any]:
    usage: dict[str, int] = {}
    for record in models:
        for key, value in _usage(record.attributes).items():
            usage[key] = usage.get(key, 0) + value
    metadata: dict[str, Any] = {
        "usage": usage,
        "model_calls": len(models),
        "models": sorted({name for r in models if (name := _model_name(r.attributes))}),
        "tool_calls": len(tools),
        "timings": {
            "model_ms": round(sum((r.end_ns - r.start_ns) / 1e6 for r in models), 3),
            "tool_ms": round(sum(t.duration_ms for t in tools), 3),
        },
        TRACE_KEY: {
            "trace_id": f"{captured.trace_id:032x}",
            "span_id": f"{top.span_id:016x}",
            "trace_flags": captured.trace_flags,
        },
    }
    model_errors = [text for r in models if (text := error_text(r)) is not None]
    if model_errors:
        metadata["model_errors"] = model_errors
    return metadata


def _usage(attributes: Mapping[str, Any]) -> dict[str, int]:
    pairs = (
        ("input_tokens", "gen_ai.usage.input_tokens", "llm.token_count.prompt"),
        ("output_tokens", "gen_ai.usage.output_tokens", "llm.token_count.completion"),
    )
    usage = {}
    for name, *keys in pairs:
        value = next((attributes[key] for key in keys if key in attributes), None)
        if isinstance(value, int):
            usage[name] = value
    if usage:
        total = attributes.get("llm.token_count.total")
        usage["total_tokens"] = total if isinstance(total, int) else sum(usage.values())
    return usage


def _model_name(attributes: Mapping[str, Any]) -> str | None:
    for key in ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name"):
        value = attributes.get(key)
        if value:
            return str(value)
    return None
