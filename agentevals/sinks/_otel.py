"""``OTelSink``: each record as an OpenTelemetry ``gen_ai.evaluation.result`` event on the agent's trace.

The GenAI semantic conventions model an evaluation result as an event, which OpenTelemetry now emits
as a *log record* with an ``event_name`` (the Events API is removed and span events are deprecated).
The record is parented to the span that was evaluated: integrations capture the trace and span ids when
the agent runs (:func:`agentevals.live.current_trace_context`; the LangChain ones take the span an
OpenTelemetry LangChain instrumentation makes for the scored run), and the sink sets them on the log
record although scoring happens later, on another thread.

Delivery: given an ``exporter``, the sink owns it and confirms each batch (a synchronous export whose
result it checks; a failure raises, so the engine retries and then dead-letters, as for a store). Through
a ``LoggerProvider`` (the application's), the provider's processors own delivery: a write only hands the
events over, and ``written`` counts them handed over, not delivered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentevals._model._result import ScoreRecord
from agentevals.sinks._thread import WorkerThread

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
    ``agentevals.entity``.

    With ``exporter=`` (e.g. OTLP's ``OTLPLogExporter``) the sink owns that exporter: each batch is
    exported synchronously on the sink's thread and a failed export raises, so the engine retries it and
    then dead-letters it (re-send with :func:`~agentevals.sinks.replay`); ``written`` counts delivered
    events; ``close()`` shuts the exporter down. Otherwise it emits through the application's configured
    ``LoggerProvider`` (or ``logger_provider=``), whose processors own delivery (``written`` counts events
    handed to it), and never configures or shuts down a provider. Needs
    ``pip install 'agentevals-core[otel]'``.

    >>> from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter
    >>> sink = OTelSink(exporter=InMemoryLogRecordExporter())
    >>> sink.check()
    """

    name = "otel"

    def __init__(
        self, *, logger_provider: Any = None, exporter: Any = None, logger_name: str = "agentevals"
    ) -> None:
        if exporter is not None and logger_provider is not None:
            raise ValueError(
                "OTelSink takes exporter= (the sink exports and confirms delivery) or logger_provider= "
                "(that provider's processors export), not both"
            )
        if exporter is not None and not callable(getattr(exporter, "export", None)):
            raise ValueError(
                "OTelSink exporter= must be an OpenTelemetry log exporter (with export(batch)), "
                f"got {exporter!r}"
            )
        self._provider = logger_provider
        self._exporter = exporter
        self._logger_name = logger_name
        self._logger: Any = None
        self._collected: list[Any] = []  # with exporter=: the events emitted by the write in progress
        self._thread = WorkerThread("agentevals-otel") if exporter is not None else None

    def check(self) -> None:
        """Verify that OpenTelemetry is installed (its SDK too with ``exporter=``)."""
        _otel()
        if self._exporter is not None:
            _sdk()

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        if self._thread is None:
            logger = self._get_logger()
            for record in records:
                logger.emit(evaluation_event(record))
            return
        await self._thread.run(lambda: self._export(records))

    async def close(self) -> None:
        """Shut the sink's own exporter down; a provider belongs to the application (it flushes it)."""
        if self._thread is None:
            return
        try:
            await self._thread.run(self._exporter.shutdown)
        finally:
            self._thread.stop()

    def _export(self, records: Sequence[ScoreRecord]) -> None:
        """Export ``records`` as one batch and check the result (on the sink's thread: one at a time)."""
        logger = self._get_logger()
        self._collected.clear()
        for record in records:
            logger.emit(evaluation_event(record))
        batch = list(self._collected)
        self._collected.clear()  # the provider's processor holds this very list
        result = self._exporter.export(batch)
        if getattr(result, "name", None) != "SUCCESS":
            raise ConnectionError(
                f"{type(self._exporter).__name__} did not deliver {len(batch)} event(s): it returned "
                f"{result!r} (its own log says why, e.g. the collector is unreachable)"
            )

    def _get_logger(self) -> Any:
        if self._logger is None:
            logs, _ = _otel()
            if self._exporter is not None:
                provider = _collecting_provider(self._collected)
            elif self._provider is not None:
                provider = self._provider
            else:
                provider = logs.get_logger_provider()
            self._logger = provider.get_logger(self._logger_name)
        return self._logger


def _collecting_provider(into: list[Any]) -> Any:
    """A private ``LoggerProvider`` (resource from the environment, e.g. ``OTEL_SERVICE_NAME``) whose
    only processor appends each emitted event, ready to export, to ``into``."""
    sdk_logs = _sdk()

    class Collect(sdk_logs.LogRecordProcessor):  # type: ignore[misc,name-defined]
        def on_emit(self, log_record: Any) -> None:
            into.append(
                sdk_logs.ReadableLogRecord(
                    log_record=log_record.log_record,
                    resource=log_record.resource,
                    instrumentation_scope=log_record.instrumentation_scope,
                    limits=log_record.limits,
                )
            )

        def shutdown(self) -> None:
            """Nothing held."""

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return True

    provider = sdk_logs.LoggerProvider()
    provider.add_log_record_processor(Collect())
    return provider


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


def _sdk() -> Any:
    try:
        from opentelemetry.sdk import _logs as sdk_logs
    except ImportError as err:
        raise ImportError(
            "OTelSink(exporter=...) needs the OpenTelemetry SDK: pip install 'agentevals-core[otel]'"
        ) from err
    return sdk_logs


def _otel() -> tuple[Any, Any]:
    try:
        from opentelemetry import _logs, trace
    except ImportError as err:
        raise ImportError("OTelSink needs OpenTelemetry: pip install 'agentevals-core[otel]'") from err
    return _logs, trace
