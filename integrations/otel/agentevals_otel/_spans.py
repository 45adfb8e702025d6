"""What the processor keeps of an ended span: plain values, taken on the application's thread.

:func:`record_of` copies references (the span's attributes are immutable once it ended) and reads two
attributes to know the span's role; everything else (JSON, message parsing) waits for the engine's thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

# Span roles, from the GenAI semantic conventions' ``gen_ai.operation.name`` or OpenInference's
# ``openinference.span.kind``.
AGENT = "agent"
CHAIN = "chain"
MODEL = "model"
TOOL = "tool"
RETRIEVER = "retriever"
OTHER = ""

GENAI_OPERATION = "gen_ai.operation.name"
OPENINFERENCE_KIND = "openinference.span.kind"

_GENAI_ROLES = {
    "invoke_agent": AGENT,
    "chat": MODEL,
    "text_completion": MODEL,
    "generate_content": MODEL,
    "execute_tool": TOOL,
}
_OPENINFERENCE_ROLES = {
    "AGENT": AGENT,
    "CHAIN": CHAIN,
    "LLM": MODEL,
    "TOOL": TOOL,
    "RETRIEVER": RETRIEVER,
}
# Roles whose span can be a run of its own: an agent, an OpenInference chain at the top of its tree, or
# a model call made outside any agent.
RUN_ROLES = frozenset({AGENT, CHAIN, MODEL})

Event = tuple[str, Mapping[str, Any]]


@dataclass(slots=True)
class SpanRecord:
    """One ended span: ids, role, name, attributes (as the span holds them), events, status, times."""

    span_id: int
    parent_id: int  # 0 for a root or a span whose parent is in another process
    name: str
    role: str
    attributes: Mapping[str, Any]
    events: tuple[Event, ...]
    error: str | None  # the status description of a span that ended in error ("" when it gave none)
    start_ns: int
    end_ns: int


def role_of(attributes: Mapping[str, Any] | None) -> str:
    """The span's role (:data:`AGENT`, :data:`MODEL`...) from its attributes, or :data:`OTHER`."""
    if not attributes:
        return OTHER
    operation = attributes.get(GENAI_OPERATION)
    if operation is not None:
        return _GENAI_ROLES.get(str(operation), OTHER)
    kind = attributes.get(OPENINFERENCE_KIND)
    if kind is not None:
        return _OPENINFERENCE_ROLES.get(str(kind).upper(), OTHER)
    return OTHER


def record_of(span: ReadableSpan, span_id: int, parent_id: int) -> SpanRecord:
    """The plain values of an ended ``span``."""
    attributes: Mapping[str, Any] = span.attributes or {}
    events: Sequence[Any] = span.events
    status = span.status
    return SpanRecord(
        span_id=span_id,
        parent_id=parent_id,
        name=span.name,
        role=role_of(attributes),
        attributes=attributes,
        events=tuple((event.name, event.attributes or {}) for event in events) if events else (),
        error=(status.description or "") if status.status_code is StatusCode.ERROR else None,
        start_ns=span.start_time or 0,
        end_ns=span.end_time or 0,
    )


def is_framework_span(parent: Any, parent_id: int) -> bool:
    """Whether ``parent``, the live span that a new span starts under, belongs to an agent framework's
    tree: it has a GenAI or OpenInference role already, or comes from an OpenInference instrumentation
    (whose spans get their role only when they end)."""
    context = parent.get_span_context()
    if context.span_id != parent_id:
        return False
    if role_of(getattr(parent, "attributes", None)):
        return True
    scope = getattr(parent, "instrumentation_scope", None)
    return scope is not None and str(scope.name).startswith("openinference.")
