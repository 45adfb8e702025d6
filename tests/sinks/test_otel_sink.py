"""OTelSink: gen_ai.evaluation.result log records, parented to the span the agent ran in; through the
SDK's in-memory exporter and through the OTLP/HTTP exporter to a local receiver on 127.0.0.1."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from agentevals_langchain import ScorerCallbackHandler
from agentevals_langchain.testing import ScriptedChatModel
from langchain.agents import create_agent
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider

from agentevals import ScoringEngine, create_scorer
from agentevals.scorers import create_exact_match_scorer
from agentevals.sinks import OTelSink
from agentevals.steps import SkipRun


def _scorers() -> list[Any]:
    def boom(**_: Any) -> float:
        raise RuntimeError("scorer broke")

    def skip(**_: Any) -> float:
        raise SkipRun("nothing to compare", reason="no_ground_truth")

    return [
        create_exact_match_scorer(),
        create_scorer(id="broken").generate_score(boom),
        create_scorer(id="skipping").generate_score(skip),
    ]


def _run_agent_in_a_span(sink: OTelSink) -> tuple[int, int]:
    """Run a LangChain agent inside an OpenTelemetry span, scored into ``sink``; the span's ids."""
    tracer = TracerProvider().get_tracer("test")
    engine = ScoringEngine(_scorers(), sinks=[sink])
    handler = ScorerCallbackHandler(engine=engine)
    agent = create_agent(ScriptedChatModel(respond=lambda messages: "Paris"))
    with tracer.start_as_current_span("agent request") as span:
        agent.invoke(
            {"messages": [("user", "Capital of France?")]},
            config={"callbacks": [handler], "metadata": {"ground_truth": "Paris"}},
        )
        context = span.get_span_context()
    engine.flush()
    engine.shutdown()
    return context.trace_id, context.span_id


def test_events_carry_the_conventions_attributes_and_the_agents_span() -> None:
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    trace_id, span_id = _run_agent_in_a_span(OTelSink(logger_provider=provider))
    records = {
        data.log_record.attributes["gen_ai.evaluation.name"]: data.log_record
        for data in exporter.get_finished_logs()
    }
    assert set(records) == {"exact_match", "broken", "skipping"}
    for record in records.values():
        assert record.event_name == "gen_ai.evaluation.result"
        assert (record.trace_id, record.span_id) == (trace_id, span_id)  # on the agent's trace
        assert record.attributes["agentevals.run_id"]
    scored = records["exact_match"].attributes
    assert scored["gen_ai.evaluation.score.value"] == 1.0 and scored["agentevals.outcome"] == "scored"
    broken = records["broken"].attributes
    assert broken["error.type"] == "RuntimeError" and "gen_ai.evaluation.score.value" not in broken
    skipped = records["skipping"].attributes
    assert skipped["gen_ai.evaluation.score.label"] == "skipped"
    assert skipped["gen_ai.evaluation.explanation"] == "nothing to compare"


def test_without_a_span_events_go_out_unparented() -> None:
    exporter = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    engine = ScoringEngine([create_exact_match_scorer()], sinks=[OTelSink(logger_provider=provider)])
    from agentevals import Run

    engine.submit(Run(input="q", output="a", ground_truth="a"))
    engine.flush()
    engine.shutdown()
    (data,) = exporter.get_finished_logs()
    assert data.log_record.trace_id in (None, 0)
    assert data.log_record.attributes["gen_ai.evaluation.score.value"] == 1.0


class _Receiver(BaseHTTPRequestHandler):
    bodies: list[bytes]

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        type(self).bodies.append(self.rfile.read(length))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[bytes]]]:
    handler = type("Receiver", (_Receiver,), {"bodies": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1/logs", handler.bodies
    server.shutdown()


def test_otlp_http_export_reaches_a_receiver_on_the_agents_trace(receiver: tuple[str, list[bytes]]) -> None:
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    endpoint, bodies = receiver
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(OTLPLogExporter(endpoint=endpoint)))
    trace_id, span_id = _run_agent_in_a_span(OTelSink(logger_provider=provider))
    provider.shutdown()
    received = []
    for body in bodies:
        request = ExportLogsServiceRequest.FromString(body)
        for resource_logs in request.resource_logs:
            for scope_logs in resource_logs.scope_logs:
                received.extend(scope_logs.log_records)
    assert len(received) == 3
    for log in received:
        assert log.event_name == "gen_ai.evaluation.result"
        assert int.from_bytes(log.trace_id, "big") == trace_id
        assert int.from_bytes(log.span_id, "big") == span_id
    names = {
        attribute.value.string_value
        for log in received
        for attribute in log.attributes
        if attribute.key == "gen_ai.evaluation.name"
    }
    assert names == {"exact_match", "broken", "skipping"}
