"""``OTelSink(exporter=...)`` confirms delivery: with the OTLP collector down a batch is retried, then
dead-lettered and counted so (never counted written); a collector that comes back gets every event. The
collector is a local OTLP/HTTP receiver on 127.0.0.1, stopped and started by the test."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.sdk._logs import LoggerProvider

from agentevals import Run, ScoringEngine
from agentevals.engine import DeliveryOptions
from agentevals.scorers import create_exact_match_scorer
from agentevals.sinks import OTelSink, RetryPolicy, replay
from tests.otlp_receiver import OtlpReceiver

_EVENTS = 50


class _Collector(OtlpReceiver):
    """An OTLP/HTTP logs receiver on a fixed loopback port that can be started after the test began."""

    def __init__(self) -> None:
        super().__init__("logs")

    def run_ids(self) -> list[str]:
        """The ``agentevals.run_id`` of every event received."""
        found = []
        for body in self.bodies:
            for resource_logs in ExportLogsServiceRequest.FromString(body).resource_logs:
                for scope_logs in resource_logs.scope_logs:
                    for log in scope_logs.log_records:
                        found += [
                            a.value.string_value for a in log.attributes if a.key == "agentevals.run_id"
                        ]
        return found


@pytest.fixture
def collector() -> Iterator[_Collector]:
    made = _Collector()
    yield made
    made.stop()


def _engine(collector: _Collector, tmp_path: Path, retry: RetryPolicy) -> ScoringEngine:
    sink = OTelSink(exporter=OTLPLogExporter(endpoint=collector.endpoint, timeout=1))
    return ScoringEngine(
        [create_exact_match_scorer()],
        sinks=[sink],
        delivery=DeliveryOptions(retry=retry, dead_letter=tmp_path / "dead.jsonl"),
    )


def _submit(engine: ScoringEngine) -> list[str]:
    ids = [f"r{i}" for i in range(_EVENTS)]
    for run_id in ids:
        engine.submit(Run(run_id=run_id, input="q", output="a", ground_truth="a"))
    return ids


def test_a_collector_down_then_up_gets_every_event(collector: _Collector, tmp_path: Path) -> None:
    engine = _engine(collector, tmp_path, RetryPolicy(attempts=60, initial=0.2, max_wait=0.5))
    ids = _submit(engine)
    deadline = time.monotonic() + 60
    while engine.stats().sink_errors == 0:  # a write failed: the collector is down
        assert time.monotonic() < deadline, "no write was attempted"
        time.sleep(0.05)
    assert engine.stats().written == {"otel": 0}
    collector.start()
    report = engine.flush(60)
    assert report, report
    assert (report.written, report.dead_lettered) == (_EVENTS, 0)
    assert sorted(collector.run_ids()) == sorted(ids)  # each once
    assert engine.shutdown()


def test_a_collector_down_throughout_dead_letters_and_nothing_counts_written(
    collector: _Collector, tmp_path: Path
) -> None:
    engine = _engine(collector, tmp_path, RetryPolicy(attempts=2, initial=0.01, max_wait=0.01))
    ids = _submit(engine)
    report = engine.flush(120)
    assert not report
    assert (report.written, report.dead_lettered) == (0, _EVENTS)
    stats = engine.stats()
    assert stats.written == {"otel": 0} and stats.dead_lettered == _EVENTS and stats.unbalanced() == []
    engine.shutdown()
    # The collector back, the dead letters go to it.
    collector.start()
    sink = OTelSink(exporter=OTLPLogExporter(endpoint=collector.endpoint, timeout=5))
    assert replay(tmp_path / "dead.jsonl", sink) == _EVENTS
    assert sorted(collector.run_ids()) == sorted(ids)


def test_exporter_and_logger_provider_together_are_refused() -> None:
    with pytest.raises(ValueError, match="not both"):
        OTelSink(exporter=OTLPLogExporter(), logger_provider=LoggerProvider())
    with pytest.raises(ValueError, match="log exporter"):
        OTelSink(exporter="http://collector:4318")
