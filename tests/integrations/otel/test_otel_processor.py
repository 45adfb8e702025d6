"""ScoringSpanProcessor on a real TracerProvider: which spans make a run, bookkeeping, limits, guards."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest
from agentevals_otel import ScoringSpanProcessor
from conftest import agent_span, call, chat, message, text, tool, weather_run
from opentelemetry import baggage, context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Tracer, set_span_in_context

from agentevals import ScoringEngine, create_scorer
from agentevals.sinks import MemorySink
from agentevals.testing import RecordingEngine


def test_an_agent_span_gives_one_run_with_messages_tools_usage_and_ids(
    tracer: Tracer, engine: RecordingEngine, processor: ScoringSpanProcessor
) -> None:
    weather_run(tracer)

    (run,) = engine.runs
    assert run.entity == "weather"
    assert [m.content for m in run.system_messages] == ["Report the weather."]
    assert run.input_text == "Weather in Paris?"
    assert run.output_text == "It is sunny in Paris."
    (invocation,) = run.output_messages[0].tool_invocations
    assert (invocation.tool_call_id, invocation.tool_name, invocation.args, invocation.result) == (
        "call-Paris",
        "get_weather",
        {"city": "Paris"},
        "sunny in Paris",
    )
    assert invocation.state == "result" and invocation.duration_ms is not None
    assert run.metadata["usage"] == {"input_tokens": 20, "output_tokens": 10, "total_tokens": 30}
    assert run.metadata["models"] == ["gpt-test"] and run.metadata["model_calls"] == 2
    assert run.metadata["tool_calls"] == 1
    otel = run.metadata["otel"]
    assert run.trace_id == otel["trace_id"] and len(run.trace_id) == 32
    assert run.run_id == otel["span_id"] and len(run.run_id) == 16
    assert run.error is None and run.started_at is not None and run.duration_ms is not None
    assert processor.open_traces == 0 and processor.skipped() == {}


def test_the_run_is_built_only_when_a_scorer_samples_it(tracer: Tracer) -> None:
    memory = MemorySink()
    built: list[str] = []
    scorer = create_scorer(id="seen").generate_score(lambda run, **_: built.append(run.run_id) or 1.0)
    processor = ScoringSpanProcessor(scorers=[scorer], sinks=[memory], sampling=0.0)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(processor)
    weather_run(provider.get_tracer("framework"))
    assert processor.force_flush()
    stats = processor.engine.stats()
    assert stats.submitted == 1 and built == [] and memory.records == []
    processor.shutdown()


def test_an_agent_under_an_application_span_is_scored_when_the_agent_ends(
    tracer: Tracer, provider: TracerProvider, engine: RecordingEngine
) -> None:
    app = provider.get_tracer("my-app")
    with app.start_as_current_span("request"), app.start_as_current_span("handler"):
        weather_run(tracer, "Paris")
        assert len(engine.runs) == 1  # the request is still open
        weather_run(tracer, "Oslo")
        assert len(engine.runs) == 2
    assert [r.input_text for r in engine.runs] == ["Weather in Paris?", "Weather in Oslo?"]
    assert engine.runs[0].trace_id == engine.runs[1].trace_id


def test_without_an_agent_span_each_root_model_call_is_a_run(tracer: Tracer, engine: RecordingEngine) -> None:
    chat(tracer, [message("user", text("hi"))], [message("assistant", text("hello"))])
    chat(tracer, [message("user", text("bye"))], [message("assistant", text("goodbye"))])
    assert [(r.input_text, r.output_text, r.entity) for r in engine.runs] == [
        ("hi", "hello", None),
        ("bye", "goodbye", None),
    ]


def test_an_agent_called_inside_a_tool_belongs_to_the_outer_run(
    tracer: Tracer, engine: RecordingEngine
) -> None:
    question = message("user", text("Plan a trip"))
    asked = message("assistant", call("c1", "ask_expert", topic="Paris"))
    with agent_span(tracer, "planner"):
        chat(tracer, [question], [asked])
        with tracer.start_as_current_span(
            "execute_tool ask_expert",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "ask_expert",
                "gen_ai.tool.call.id": "c1",
            },
        ) as span:
            chat(tracer, [message("user", text("What about Paris?"))], [message("assistant", text("Go"))])
            weather_run(tracer, "Paris", name="expert")
            span.set_attribute("gen_ai.tool.call.result", "Go in May")
        chat(tracer, [question, asked], [message("assistant", text("Go to Paris in May."))])
    (run,) = engine.runs
    assert run.entity == "planner"
    assert run.output_text == "Go to Paris in May."
    assert run.metadata["model_calls"] == 2  # the expert's calls are the tool's own
    assert run.output_messages[0].tool_invocations[0].result == "Go in May"


def test_a_failing_agent_gives_a_run_with_its_error_and_the_tool_error(
    tracer: Tracer, engine: RecordingEngine
) -> None:
    question = message("user", text("Look up x"))
    with pytest.raises(RuntimeError), agent_span(tracer, "lookup"):
        chat(tracer, [question], [message("assistant", call("c1", "lookup", key="x"))])
        tool(tracer, "c1", "lookup", {"key": "x"}, error="RuntimeError: backend down")
        raise RuntimeError("backend down")
    (run,) = engine.runs
    assert run.error == "RuntimeError: backend down"
    (invocation,) = run.output_messages[0].tool_invocations
    assert (invocation.state, invocation.error) == ("error", "RuntimeError: backend down")


def test_ground_truth_and_metadata_from_baggage_and_span_attributes(
    tracer: Tracer, engine: RecordingEngine
) -> None:
    ctx = baggage.set_baggage("agentevals.ground_truth", "sunny")
    ctx = baggage.set_baggage("agentevals.metadata.user", "u1", ctx)
    ctx = baggage.set_baggage("agentevals.metadata.tier", "free", ctx)
    token = context.attach(ctx)
    try:
        with agent_span(
            tracer, **{"agentevals.metadata.tier": "pro", "agentevals.metadata.tags": ("a", "b")}
        ):
            chat(tracer, [message("user", text("hi"))], [message("assistant", text("sunny"))])
    finally:
        context.detach(token)
    with agent_span(tracer, **{"agentevals.ground_truth": "hello"}):
        chat(tracer, [message("user", text("hi"))], [message("assistant", text("hello"))])
    first, second = engine.runs
    assert first.ground_truth == "sunny"
    assert {k: first.metadata[k] for k in ("user", "tier", "tags")} == {
        "user": "u1",
        "tier": "pro",
        "tags": ["a", "b"],
    }
    assert second.ground_truth == "hello" and "user" not in second.metadata


def test_a_late_child_of_a_finished_run_is_dropped_and_the_trace_closed(
    tracer: Tracer, engine: RecordingEngine, processor: ScoringSpanProcessor
) -> None:
    with agent_span(tracer):
        chat(tracer, [message("user", text("hi"))], [message("assistant", text("hello"))])
        late = tracer.start_span("stream chunk", attributes={"gen_ai.operation.name": "chat"})
    assert processor.open_traces == 1  # the late span is still open inside the finished run
    late.end()
    assert len(engine.runs) == 1 and processor.open_traces == 0


def test_traces_whose_top_never_ends_are_dropped_after_the_timeout(engine: RecordingEngine) -> None:
    processor = ScoringSpanProcessor(engine=engine, trace_timeout=0.05)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("framework")
    never = tracer.start_span("invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent"})
    tracer.start_span(
        "chat", context=set_span_in_context(never), attributes={"gen_ai.operation.name": "chat"}
    ).end()
    assert processor.open_traces == 1
    time.sleep(0.1)
    weather_run(tracer)  # a later span end sweeps the idle traces
    assert processor.open_traces == 0
    assert processor.skipped() == {"expired traces": 1}
    assert [r.input_text for r in engine.runs] == ["Weather in Paris?"]


def test_at_most_max_open_traces_are_held_the_oldest_dropped_and_counted(engine: RecordingEngine) -> None:
    processor = ScoringSpanProcessor(engine=engine, max_open_traces=3)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("framework")
    for _ in range(5):  # agents that never end, each with a model call that did
        agent = tracer.start_span("invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent"})
        tracer.start_span(
            "chat", context=set_span_in_context(agent), attributes={"gen_ai.operation.name": "chat"}
        ).end()
    assert processor.open_traces == 3
    assert processor.skipped() == {"overflowed traces": 2}


def test_callbacks_never_raise_into_the_application(
    tracer: Tracer, processor: ScoringSpanProcessor, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        context = property(lambda self: 1 / 0)
        parent = None

    with caplog.at_level(logging.WARNING, logger="agentevals.otel"):
        processor.on_end(Broken())  # type: ignore[arg-type]
        processor.on_end(Broken())  # type: ignore[arg-type]
        processor.on_start(Broken())  # type: ignore[arg-type]
    assert processor.skipped() == {"failed on_end": 2, "failed on_start": 1}
    assert len([r for r in caplog.records if "on_end failed" in r.message]) == 1


def test_an_engine_that_raises_never_reaches_the_application(tracer: Tracer) -> None:
    class Exploding(RecordingEngine):
        def submit_lazy(self, build: Any, *, run_id: str, trace_id: str | None = None) -> bool:
            raise RuntimeError("engine exploded")

    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(ScoringSpanProcessor(engine=Exploding()))
    weather_run(provider.get_tracer("framework"))  # does not raise


def test_what_cannot_be_read_is_counted_per_kind_and_logged_once(
    tracer: Tracer, engine: RecordingEngine, processor: ScoringSpanProcessor, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="agentevals.otel"):
        for _ in range(2):
            with agent_span(tracer):
                attributes = {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.input.messages": "not json",
                    "gen_ai.output.messages": json.dumps(
                        [message("assistant", {"type": "blob"}, text("hi"))]
                    ),
                }
                with tracer.start_as_current_span("chat", attributes=attributes):
                    pass
            with agent_span(tracer):  # no model call, no messages: not a run
                pass
    assert [r.output_text for r in engine.runs] == ["hi", "hi"]
    assert processor.skipped() == {
        "invalid JSON in gen_ai.input.messages": 2,
        "genai part blob": 2,
        "no model call": 2,
    }
    assert len(caplog.records) == 3


def test_the_scorers_own_spans_are_not_scored(tracer: Tracer, provider: TracerProvider) -> None:
    def judge(run: Any, **_: Any) -> float:  # a judge whose model calls are traced by the same provider
        chat(
            provider.get_tracer("judge"), [message("user", text("grade"))], [message("assistant", text("1"))]
        )
        return 1.0

    memory = MemorySink()
    engine = ScoringEngine([create_scorer(id="judged").generate_score(judge)], sinks=[memory])
    scoring = ScoringSpanProcessor(engine=engine)
    provider.add_span_processor(scoring)
    weather_run(tracer)
    assert scoring.force_flush()
    assert [r.scorer_id for r in memory.records] == ["judged"]
    assert engine.stats().submitted == 1
    engine.shutdown()


def test_force_flush_and_shutdown_reach_the_engine_and_spans_after_shutdown_are_ignored(
    tracer: Tracer, provider: TracerProvider, engine: RecordingEngine
) -> None:
    assert provider.force_flush() is True
    assert engine.flushes == 1
    provider.shutdown()
    assert engine.shutdowns == 1
    weather_run(tracer)
    assert engine.runs == []


def test_options_are_checked_at_construction(engine: RecordingEngine) -> None:
    with pytest.raises(ValueError, match="max_open_traces"):
        ScoringSpanProcessor(engine=engine, max_open_traces=0)
    with pytest.raises(ValueError, match="trace_timeout"):
        ScoringSpanProcessor(engine=engine, trace_timeout=0)
    with pytest.raises(ValueError, match="either engine= or"):
        ScoringSpanProcessor(engine=engine, sinks=[])


def test_a_run_with_nothing_to_read_gives_error_records_not_a_wrong_run() -> None:
    memory = MemorySink()
    anything = create_scorer(id="any").generate_score(lambda run, **_: 1.0)
    scoring = ScoringSpanProcessor(scorers=[anything], sinks=[memory])
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(scoring)
    with provider.get_tracer("framework").start_as_current_span(
        "chat", attributes={"gen_ai.operation.name": "chat"}
    ):
        pass  # a model call whose instrumentation records no content
    scoring.force_flush()
    (record,) = memory.records
    assert record.outcome == "failed" and "no messages" in record.error_message  # type: ignore[union-attr]
    assert scoring.skipped() == {"model span without messages": 1, "no conversation": 1}
    scoring.shutdown()
