"""Evaluation events on the spans an OpenTelemetry LangChain instrumentation makes (OpenLLMetry's
``opentelemetry-instrumentation-langchain``), with no application span around the agent: each
``gen_ai.evaluation.result`` log record carries the trace id and span id of the span the instrumentation
made for the scored root run, whether the handler or the middleware captured the run, sync or async.

The instrumentation patches LangChain for the whole process and its ``uninstrument`` leaves its callback
handler in place, so the scenarios run in a child process (this file run as a script) that prints what it
saw as JSON; the tests assert on that.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

GROUND_TRUTH = {"metadata": {"ground_truth": "Paris"}}
Scenario = dict[str, Any]


@pytest.fixture(scope="module")
def scenarios() -> dict[str, Scenario]:
    proc = subprocess.run([sys.executable, __file__], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def _assert_on_the_runs_span(scenario: Scenario) -> None:
    span = scenario["span"]
    events = scenario["events"]
    assert set(events) == {"exact_match", "broken"}
    for event in events.values():
        assert event["event_name"] == "gen_ai.evaluation.result"
        assert (event["trace_id"], event["span_id"]) == (span["trace_id"], span["span_id"])
    assert events["exact_match"]["score"] == 1.0
    assert events["broken"]["error_type"] == "RuntimeError"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_handler_events_land_on_the_instrumented_agents_span(
    scenarios: dict[str, Scenario], mode: str
) -> None:
    scenario = scenarios[f"handler_{mode}"]
    assert scenario["span"]["operation"] == "invoke_agent"
    _assert_on_the_runs_span(scenario)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_middleware_events_land_on_the_agents_span_not_its_own_node(
    scenarios: dict[str, Scenario], mode: str
) -> None:
    scenario = scenarios[f"middleware_{mode}"]
    # The middleware captures inside its before_agent node, whose own span is current there.
    assert scenario["node_parents"] == [scenario["span"]["span_id"]]
    assert scenario["span"]["operation"] == "invoke_agent"
    _assert_on_the_runs_span(scenario)


def test_a_chains_events_land_on_its_span_made_after_the_handlers_start_hook(
    scenarios: dict[str, Scenario],
) -> None:
    # No span is current when the handler sees the chain start (the instrumentation's handler runs after
    # it): the span is taken at the first child run.
    scenario = scenarios["chain"]
    assert scenario["span"]["parent"] is None
    _assert_on_the_runs_span(scenario)


def test_a_root_without_children_gets_its_span_at_its_end(scenarios: dict[str, Scenario]) -> None:
    scenario = scenarios["lambda"]
    assert scenario["span"]["parent"] is None
    _assert_on_the_runs_span(scenario)


def test_inside_an_application_span_events_land_on_the_agents_span_in_that_trace(
    scenarios: dict[str, Scenario],
) -> None:
    scenario = scenarios["in_app_span"]
    assert scenario["span"]["trace_id"] == scenario["app_trace_id"]
    assert scenario["span"]["span_id"] != scenario["app_span_id"]
    _assert_on_the_runs_span(scenario)


# -- the child process ------------------------------------------------------------------------------


def _run_scenarios() -> dict[str, Scenario]:
    from agentevals_langchain import ScorerCallbackHandler, ScoringMiddleware
    from agentevals_langchain.testing import ScriptedChatModel
    from langchain.agents import create_agent
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.runnables import RunnableLambda
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from agentevals import ScoringEngine, create_scorer
    from agentevals.scorers import create_exact_match_scorer
    from agentevals.sinks import OTelSink

    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    LangchainInstrumentor().instrument(tracer_provider=tracer_provider)

    def boom(**_: Any) -> float:
        raise RuntimeError("scorer broke")

    def model() -> Any:
        return ScriptedChatModel(respond=lambda messages: "Paris")

    def invoke(agent: Any, mode: str, config: dict[str, Any]) -> None:
        request = {"messages": [("user", "Capital of France?")]}
        if mode == "async":
            asyncio.run(agent.ainvoke(request, config=config))
        else:
            agent.invoke(request, config=config)

    def ids(span: ReadableSpan) -> dict[str, Any]:
        return {
            "trace_id": span.context.trace_id,
            "span_id": span.context.span_id,
            "parent": span.parent.span_id if span.parent else None,
            "operation": (span.attributes or {}).get("gen_ai.operation.name"),
        }

    def run(scenario: Callable[[ScoringEngine], dict[str, Any]]) -> Scenario:
        """Run one scenario scored into an OTelSink; the events it emitted and the root run's span."""
        spans.clear()
        logs = InMemoryLogRecordExporter()
        logger_provider = LoggerProvider()
        logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
        scorers = [create_exact_match_scorer(), create_scorer(id="broken").generate_score(boom)]
        engine = ScoringEngine(scorers, sinks=[OTelSink(logger_provider=logger_provider)])
        extra = scenario(engine)
        engine.shutdown()
        finished = spans.get_finished_spans()
        # The span the instrumentation made for the root run is its "workflow" span.
        (root,) = [s for s in finished if (s.attributes or {}).get("traceloop.span.kind") == "workflow"]
        events = {
            str(r.attributes["gen_ai.evaluation.name"]): {
                "event_name": r.event_name,
                "trace_id": r.trace_id,
                "span_id": r.span_id,
                "score": r.attributes.get("gen_ai.evaluation.score.value"),
                "error_type": r.attributes.get("error.type"),
            }
            for r in (data.log_record for data in logs.get_finished_logs())
            if r.attributes is not None
        }
        node_parents = sorted(
            {s.parent.span_id for s in finished if s.name.endswith(".before_agent") and s.parent}
        )
        return {"span": ids(root), "events": events, "node_parents": node_parents, **extra}

    def handler(mode: str) -> Callable[[ScoringEngine], dict[str, Any]]:
        def scenario(engine: ScoringEngine) -> dict[str, Any]:
            invoke(
                create_agent(model()),
                mode,
                {"callbacks": [ScorerCallbackHandler(engine=engine)], **GROUND_TRUTH},
            )
            return {}

        return scenario

    def middleware(mode: str) -> Callable[[ScoringEngine], dict[str, Any]]:
        def scenario(engine: ScoringEngine) -> dict[str, Any]:
            invoke(create_agent(model(), middleware=[ScoringMiddleware(engine=engine)]), mode, GROUND_TRUTH)
            return {}

        return scenario

    def chain(engine: ScoringEngine) -> dict[str, Any]:
        runnable = ChatPromptTemplate.from_messages([("user", "{question}")]) | model()
        config = {"callbacks": [ScorerCallbackHandler(engine=engine)], **GROUND_TRUTH}
        runnable.invoke({"question": "Capital of France?"}, config=config)
        return {}

    def lone_lambda(engine: ScoringEngine) -> dict[str, Any]:
        config = {"callbacks": [ScorerCallbackHandler(engine=engine)], **GROUND_TRUTH}
        RunnableLambda(lambda question: "Paris").invoke("Capital of France?", config=config)
        return {}

    def in_app_span(engine: ScoringEngine) -> dict[str, Any]:
        tracer = TracerProvider().get_tracer("app")
        with tracer.start_as_current_span("request") as request:
            handler("sync")(engine)
        context = request.get_span_context()
        return {"app_trace_id": context.trace_id, "app_span_id": context.span_id}

    return {
        "handler_sync": run(handler("sync")),
        "handler_async": run(handler("async")),
        "middleware_sync": run(middleware("sync")),
        "middleware_async": run(middleware("async")),
        "chain": run(chain),
        "lambda": run(lone_lambda),
        "in_app_span": run(in_app_span),
    }


if __name__ == "__main__":
    print(json.dumps(_run_scenarios()))
