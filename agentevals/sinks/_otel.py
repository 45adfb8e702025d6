"""``OTelSink``: each record as an OpenTelemetry ``gen_ai.evaluation.result`` event on the agent's trace.

The GenAI semantic conventions model an evaluation result as an event, which OpenTelemetry now emits
as a *log record* with an ``event_name`` (the Events API is removed and span events are deprecated).
The record is parented to the span that was evaluated: integrations capture the trace and span ids when
the agent runs (:func:`agentevals.live.current_trace_context`; the LangChain ones take the span an
OpenTelemetry LangChain instrumentation makes for the scored run), and the sink sets them on the log
record although scoring happens later, on another thread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentevals._result import ScoreRecord

EVENT_NAME = "gen_ai.evaluation.result"
TRACE_KEY = "otel"
"""The run ``metadata`` key of its trace context: ``{"trace_id": hex, "span_id": hex, "trace_flags": 1}``."""


class OTelSink:
    """Emit one ``gen_ai.evaluation.result`` event (an OpenTelemetry log record) per score record.

    Attributes: ``gen_ai.evaluation.name`` (the scorer id), ``gen_ai.evaluation.score.value``,
    ``gen_ai.evaluation.score.label`` (``skipped`` for a skipped evaluation, or the run metadata's
    ``label``), ``gen_ai.evaluation.explanation`` (the reason), ``error.type`` for a failed evaluation,
    ``gen_ai.response.id`` when the run's metadata has ``response_id``, and ``agentevals.run_id``,
    ``agentevals.scorer_id``, ``agentevals.scorer_version``, ``agentevals.outcome``,
    ``agentevals.entity``. It uses the application's configured ``LoggerProvider`` (or the one given) and
    never configures or shuts down a global provider. Needs ``pip install 'agentevals-core[otel]'``.

    >>> from opentelemetry.sdk._logs import LoggerProvider
    >>> sink = OTelSink(logger_provider=LoggerProvider())
    >>> sink.check()
    """

    name = "otel"

    def __init__(self, *, logger_provider: Any = None, logger_name: str = "agentevals") -> None:
        self._provider = logger_provider
        self._logger_name = logger_name
        self._logger: Any = None

    def check(self) -> None:
        """Verify that the OpenTelemetry API is installed."""
        _otel()

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        logger = self._get_logger()
        for record in records:
            logger.emit(evaluation_event(record))

    async def close(self) -> None:
        """Nothing to close: the provider belongs to the application (flush it at its own exit)."""

    def _get_logger(self) -> Any:
        if self._logger is None:
            logs, _ = _otel()
            provider = self._provider if self._provider is not None else logs.get_logger_provider()
            self._logger = provider.get_logger(self._logger_name)
        return self._logger


def evaluation_event(record: ScoreRecord) -> Any:
    """The OpenTelemetry log record of one score record, parented to the evaluated span when known."""
    logs, trace = _otel()
    metadata = record.metadata if isinstance(record.metadata, Mapping) else {}
    attributes: dict[str, Any] = {
        "gen_ai.evaluation.name": record.scorer_id,
        "agentevals.scorer_id": record.scorer_id,
        "agentevals.run_id": record.run_id,
        "agentevals.outcome": record.outcome,
    }
    optional = {
        "gen_ai.evaluation.score.value": record.score,
        "gen_ai.evaluation.score.label": "skipped" if record.outcome == "skipped" else metadata.get("label"),
        "gen_ai.evaluation.explanation": record.reason,
        "error.type": getattr(record, "error_type", None),
        "gen_ai.response.id": metadata.get("response_id"),
        "agentevals.scorer_version": getattr(record, "scorer_version", None),
        "agentevals.entity": record.entity,
    }
    attributes.update({key: value for key, value in optional.items() if value is not None})
    return logs.LogRecord(
        event_name=EVENT_NAME,
        body=record.reason,
        attributes=attributes,
        context=_span_context(trace, metadata.get(TRACE_KEY)),
    )


def _span_context(trace: Any, captured: Any) -> Any:
    """A context whose current span is the evaluated one, or ``None`` when none was captured."""
    if not isinstance(captured, Mapping):
        return None
    try:
        span = trace.NonRecordingSpan(
            trace.SpanContext(
                trace_id=int(str(captured["trace_id"]), 16),
                span_id=int(str(captured["span_id"]), 16),
                is_remote=True,
                trace_flags=trace.TraceFlags(int(captured.get("trace_flags", 1))),
            )
        )
    except (KeyError, TypeError, ValueError):  # a malformed capture: the event goes out unparented
        return None
    return trace.set_span_in_context(span)


def _otel() -> tuple[Any, Any]:
    try:
        from opentelemetry import _logs, trace
    except ImportError as err:
        raise ImportError("OTelSink needs OpenTelemetry: pip install 'agentevals-core[otel]'") from err
    return _logs, trace
