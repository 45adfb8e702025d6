"""ScoringSpanProcessor beside a BatchSpanProcessor exporting to a local OTLP/HTTP receiver (127.0.0.1):
both see every span, and what the exporter sends is what it sends without the processor."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import require

from agentevals.testing import RecordingEngine
from tests.otlp_receiver import OtlpReceiver

require("pydantic_ai", "pydantic-ai is not installed (uv sync --all-packages)")

from agentevals_otel import ScoringSpanProcessor  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.capabilities import Instrumentation  # noqa: E402
from pydantic_ai.models.instrumented import InstrumentationSettings  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402

# Attributes whose values differ from run to run (ids pydantic-ai makes, timings)
_PER_RUN = ("gen_ai.agent.call.id", "gen_ai.conversation.id", "gen_ai.client.operation.time_to_first_chunk")


class Receiver(OtlpReceiver):
    """An OTLP/HTTP traces receiver on a free loopback port, started at once."""

    def __init__(self) -> None:
        super().__init__("traces")
        self.start()

    def spans(self) -> list[Any]:
        return [
            span
            for body in self.bodies
            for resource_spans in ExportTraceServiceRequest.FromString(body).resource_spans
            for scope_spans in resource_spans.scope_spans
            for span in scope_spans.spans
        ]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.stop()


def run_agents(receiver: Receiver, processor: ScoringSpanProcessor | None) -> list[Any]:
    """Three runs of a two-tool agent traced to the receiver (and to ``processor``); the spans received."""
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=receiver.endpoint, timeout=5)))
    if processor is not None:
        provider.add_span_processor(processor)
    settings = InstrumentationSettings(tracer_provider=provider)
    agent = Agent(TestModel(), name="weather", capabilities=[Instrumentation(settings=settings)])

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    @agent.tool_plain
    def get_time(city: str) -> str:
        """The time in a city."""
        return "noon"

    for city in ("Paris", "Oslo", "Rome"):
        agent.run_sync(f"Weather in {city}?")
    assert provider.force_flush()
    provider.shutdown()
    received = receiver.spans()
    receiver.bodies.clear()
    return received


def shape(span: Any) -> tuple[Any, ...]:
    """A received span without what differs between two runs of the same agent (ids, times)."""
    attributes = tuple((a.key, a.value.SerializeToString()) for a in span.attributes if a.key not in _PER_RUN)
    events = tuple((e.name, len(e.attributes)) for e in span.events)
    return span.name, span.kind, attributes, events, span.status.code, span.status.message


def test_both_see_every_span_and_the_exported_data_is_unchanged(receiver: Receiver) -> None:
    without = run_agents(receiver, None)
    engine = RecordingEngine()
    with_scoring = run_agents(receiver, ScoringSpanProcessor(engine=engine))

    assert len(with_scoring) == len(without) == 3 * 5  # per run: the agent, two model calls, two tools
    assert Counter(map(shape, with_scoring)) == Counter(map(shape, without))
    agent_spans = {
        (span.trace_id.hex(), span.span_id.hex())
        for span in with_scoring
        if span.name == "invoke_agent weather"
    }
    assert {(run.trace_id, run.run_id) for run in engine.runs} == agent_spans
    assert sorted(run.input_text for run in engine.runs) == [
        "Weather in Oslo?",
        "Weather in Paris?",
        "Weather in Rome?",
    ]
    assert engine.shutdowns == 1  # the provider's shutdown reached the engine
