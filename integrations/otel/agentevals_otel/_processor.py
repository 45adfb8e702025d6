"""``ScoringSpanProcessor``: score the agent runs that any framework traces with OpenTelemetry, live."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opentelemetry import baggage
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import get_current_span

from agentevals import FlushReport, Run, Scorer
from agentevals.live import Engine, LiveScoring, is_scoring
from agentevals_otel._build import CapturedRun
from agentevals_otel._genai import ALL_MESSAGES, INPUT_MESSAGES
from agentevals_otel._spans import MODEL, is_framework_span, record_of
from agentevals_otel._tally import Tally
from agentevals_otel._traces import OpenTraces, Tree, runs_in

_BAGGAGE_PREFIX = "agentevals."
# What an agent span may carry for a run without model calls to read
_RUN_IO = (ALL_MESSAGES, INPUT_MESSAGES, "input.value", "output.value")


class ScoringSpanProcessor(LiveScoring, SpanProcessor):
    """An OpenTelemetry ``SpanProcessor`` that turns each agent run a framework traces into a ``Run``
    and hands it to a scoring engine.

    Add it to the ``TracerProvider`` the framework traces to, beside any exporter. It groups the spans
    of each trace; when an agent span ends (GenAI ``invoke_agent``, OpenInference ``AGENT``, or an
    OpenInference ``CHAIN`` at the top of its tree) the run is built on the engine's thread, only if a
    scorer samples it, from its model and tool spans (GenAI semantic conventions or OpenInference). A
    model call outside any agent is a run of its own. ``agentevals.ground_truth`` and
    ``agentevals.metadata.<key>``, as span attributes or as baggage current when the agent starts, give
    the run its ground truth and metadata. ``entity=`` names the agent (by default the agent span's).

    Traces with no span starting or ending for ``trace_timeout`` seconds are dropped, and at most
    ``max_open_traces`` are kept (the least recently active dropped first); :meth:`skipped` counts
    these and whatever could not be read, each kind logged once. Other keywords are those of every
    integration (``engine=``, or ``scorers=``, ``sinks=``, ``sampling=``, ``score_errors=`` and any
    ``ScoringEngine`` option). ``force_flush`` and ``shutdown`` flush and shut down the engine.

    >>> from opentelemetry.sdk.trace import TracerProvider
    >>> from agentevals.scorers import create_includes_scorer
    >>> provider = TracerProvider()
    >>> processor = ScoringSpanProcessor(scorers=[create_includes_scorer()], sinks=[])
    >>> provider.add_span_processor(processor)
    >>> bool(processor.force_flush()), processor.open_traces
    (True, 0)
    >>> bool(processor.shutdown())
    True
    """

    def __init__(
        self,
        *,
        scorers: Mapping[str, Any] | Sequence[Scorer] | Scorer | None = None,
        sinks: Sequence[Any] | None = None,
        engine: Engine | None = None,
        sampling: float | Mapping[str, Any] | Callable[[Run], bool] | None = None,
        entity: str | None = None,
        score_errors: bool | None = None,
        max_open_traces: int = 10_000,
        trace_timeout: float = 600.0,
        **engine_options: Any,
    ) -> None:
        if max_open_traces < 1:
            raise ValueError(f"max_open_traces must be >= 1, got {max_open_traces!r}")
        if not trace_timeout > 0:
            raise ValueError(f"trace_timeout must be > 0 seconds, got {trace_timeout!r}")
        LiveScoring.__init__(
            self,
            scorers=scorers,
            sinks=sinks,
            engine=engine,
            sampling=sampling,
            score_errors=score_errors,
            **engine_options,
        )
        self.entity = entity
        self._tally = Tally()
        self._traces = OpenTraces(max_traces=max_open_traces, timeout=trace_timeout, on_drop=self._dropped)
        self._stopped = False

    # -- what it holds and dropped ------------------------------------------------------------------

    @property
    def open_traces(self) -> int:
        """Traces with spans held, waiting for the top of their tree to end."""
        return len(self._traces)

    def skipped(self) -> dict[str, int]:
        """What was dropped or could not be read, counted per kind (``"expired traces"``,
        ``"overflowed traces"``, ``"no conversation"``, ``"genai part blob"``...)."""
        return self._tally.counts()

    # -- SpanProcessor --------------------------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        if self._stopped:
            return
        try:
            parent = span.parent
            context = span.context
            traces = self._traces
            if parent is not None and not parent.is_remote:
                if traces.enclose_under(context.trace_id, context.span_id, parent.span_id):
                    return
                if is_framework_span(get_current_span(parent_context), parent.span_id):
                    traces.enclose(context.trace_id, context.span_id)
                    return
            if is_framework_span(span, context.span_id):  # a top that can hold runs (an application's cannot)
                current = baggage.get_all(parent_context)
                found = {k: str(v) for k, v in current.items() if k.startswith(_BAGGAGE_PREFIX)}
                traces.top_started(context.trace_id, context.span_id, found)
        except Exception:
            self._tally.note("failed on_start", "on_start failed; the span is not followed", exc_info=True)

    def on_end(self, span: ReadableSpan) -> None:
        if self._stopped:
            return
        try:
            context = span.context
            parent = span.parent
            parent_id = parent.span_id if parent is not None and not parent.is_remote else 0
            tree = self._traces.ended(context.trace_id, record_of(span, context.span_id, parent_id))
            if tree is not None:
                self._submit(tree, context.trace_id, int(context.trace_flags))
        except Exception:
            self._tally.note("failed on_end", "on_end failed; the span is not followed", exc_info=True)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Wait until the runs of the agent spans that ended so far are scored and stored."""
        return bool(self.flush(timeout_millis / 1000))

    # The provider calls shutdown() and ignores what it returns; callers get LiveScoring's report.
    def shutdown(self, timeout: float = 30.0) -> FlushReport:  # type: ignore[override]
        """Stop following spans, forget the open traces, then flush and shut down the engine."""
        self._stopped = True
        self._traces.clear()
        return self.engine.shutdown(timeout)

    # -- runs ---------------------------------------------------------------------------------------

    def _submit(self, tree: Tree, trace_id: int, trace_flags: int) -> None:
        if is_scoring():  # the scorers' own model calls (an LLM judge traced by the same provider)
            return
        for records in runs_in(tree.records):
            top = records[0]
            if not any(r.role == MODEL for r in records) and not any(k in top.attributes for k in _RUN_IO):
                self._tally.note("no model call", f"span {top.name!r} has no model call or messages under it")
                continue
            captured = CapturedRun(records, trace_id, trace_flags, tree.baggage, self.entity, self._tally)
            self.submit_lazy(captured, run_id=f"{top.span_id:016x}", trace_id=f"{trace_id:032x}")

    def _dropped(self, reason: str, count: int) -> None:
        if reason == "expired":
            detail = (
                f"a trace had no span start or end for {self._traces.timeout:g} s (trace_timeout): its spans "
                "were dropped without scoring"
            )
        else:
            detail = (
                f"{self._traces.max_traces} traces were open at once (max_open_traces): the least recently "
                "active was dropped without scoring"
            )
        self._tally.note(f"{reason} traces", detail, count)
