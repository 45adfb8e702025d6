"""LangfuseSink against a fake Langfuse API on 127.0.0.1 (POST /api/public/scores, GET
/api/public/projects): request bodies, trace ids, idempotent re-sends, permanent and transient errors."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from typing import Any

import pytest
from fake_http import FakeServer, fake_server
from langfuse import Langfuse

from agentevals.results import ScoreFailure, ScoreResult, ScoreSkipped
from agentevals.sinks import LangfuseSink, SinkConfigError, is_permanent
from agentevals.sinks._langfuse import langfuse_trace_id
from agentevals.sinks._langsmith import feedback_id

SCORES = "/api/public/scores"
OTEL_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
ROUTES = {
    ("POST", SCORES): (202, {"message": "Accepted"}),
    ("GET", "/api/public/projects"): (
        200,
        {"data": [{"id": "p1", "name": "demo", "organization": {"id": "o1", "name": "org"}, "metadata": {}}]},
    ),
}


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with fake_server(ROUTES) as state:
        yield state


def _sink(server: FakeServer, **options: Any) -> LangfuseSink:
    return LangfuseSink(public_key="pk-lf-1", secret_key="sk-lf-1", base_url=server.url, **options)


def _write(sink: LangfuseSink, records: list[Any]) -> None:
    async def go() -> None:
        try:
            await sink.write(records)
        finally:
            await sink.close()

    asyncio.run(go())


def _records() -> list[ScoreResult | ScoreFailure | ScoreSkipped]:
    otel = {"otel": {"trace_id": OTEL_TRACE, "span_id": "00f067aa0ba902b7", "trace_flags": 1}}
    return [
        ScoreResult(scorer_id="exact", scorer_name="s", run_id="r1", trace_id="t1", score=1.0, reason="ok",
                    metadata=otel),
        ScoreFailure(scorer_id="judge", scorer_name="s", run_id="r1", trace_id="t1",
                     error_type="TimeoutError", error_message="no answer"),
        ScoreSkipped(scorer_id="grounded", scorer_name="s", run_id="r1", trace_id="t1",
                     skip_reason="no_context", reason="no retrieved context"),
    ]  # fmt: skip


def test_one_score_per_record_in_one_batch(server: FakeServer) -> None:
    records = _records()
    _write(_sink(server, environment="staging"), records)
    (batch,) = server.sent("POST", SCORES)
    scored, failed, skipped = batch
    assert scored == {
        "id": str(feedback_id(records[0])),
        "traceId": OTEL_TRACE,  # the OpenTelemetry trace captured with the run
        "name": "exact",
        "value": 1.0,
        "dataType": "NUMERIC",
        "comment": "ok",
        "metadata": {"agentevals_run_id": "r1", "outcome": "scored"},
        "environment": "staging",
        "timestamp": records[0].created_at.isoformat(),
    }
    derived = Langfuse.create_trace_id(seed="t1")  # the client's own derivation of an external id
    assert (failed["name"], failed["value"], failed["dataType"]) == ("judge", "error", "CATEGORICAL")
    assert failed["comment"] == "TimeoutError: no answer" and failed["traceId"] == derived
    assert failed["metadata"]["error_type"] == "TimeoutError"
    assert (skipped["value"], skipped["dataType"], skipped["comment"]) == (
        "skipped",
        "CATEGORICAL",
        "no retrieved context",
    )
    assert skipped["metadata"]["skip_reason"] == "no_context"
    auth = next(r.headers for r in server.requests if r.path == SCORES)["Authorization"]
    assert auth == "Basic " + base64.b64encode(b"pk-lf-1:sk-lf-1").decode()


def test_a_categorical_scorer_sends_its_label(server: FakeServer) -> None:
    record = _records()[0].model_copy(update={"metadata": {"label": "pass"}})
    _write(_sink(server, categorical=["exact"]), [record])
    ((score,),) = server.sent("POST", SCORES)
    assert (score["value"], score["dataType"], score["metadata"]["score"]) == ("pass", "CATEGORICAL", 1.0)


def test_trace_ids_already_in_langfuse_format_are_kept() -> None:
    record = _records()[1].model_copy(update={"trace_id": OTEL_TRACE})
    assert langfuse_trace_id(record) == OTEL_TRACE
    no_trace = _records()[1].model_copy(update={"trace_id": None})
    assert langfuse_trace_id(no_trace) == Langfuse.create_trace_id(seed="r1")


def test_a_resent_batch_sends_the_same_ids_and_timestamps(server: FakeServer) -> None:
    records = _records()
    _write(_sink(server), records)
    _write(_sink(server), records)
    first, second = server.sent("POST", SCORES)
    assert [(s["id"], s["timestamp"]) for s in first] == [(s["id"], s["timestamp"]) for s in second]
    assert len({s["id"] for s in first}) == 3


def test_check_passes_with_accepted_keys(server: FakeServer) -> None:
    _sink(server).check()
    assert [r.path for r in server.requests] == ["/api/public/projects"]


def test_check_without_keys_says_how_to_set_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANGFUSE_PUBLIC_KEY", raising=False)
    monkeypatch.delenv("LANGFUSE_SECRET_KEY", raising=False)
    with pytest.raises(SinkConfigError, match="LANGFUSE_PUBLIC_KEY"):
        LangfuseSink(base_url="http://127.0.0.1:1").check()


def test_a_401_is_permanent(server: FakeServer) -> None:
    server.status = 401
    with pytest.raises(SinkConfigError, match="refused the keys"):
        _sink(server).check()
    with pytest.raises(SinkConfigError) as raised:
        _write(_sink(server), _records())
    assert is_permanent(raised.value)


def test_a_503_is_transient_and_not_retried_by_the_client(server: FakeServer) -> None:
    server.status = 503
    with pytest.raises(Exception) as raised:
        _write(_sink(server), _records())
    assert not is_permanent(raised.value)
    assert len(server.sent("POST", SCORES)) == 1


def test_rejected_scores_are_permanent(server: FakeServer) -> None:
    server.routes[("POST", SCORES)] = (207, {"accepted": 2, "rejected": 1, "errors": [{"message": "bad"}]})
    with pytest.raises(SinkConfigError, match="rejected 1 of 3 scores: bad"):
        _write(_sink(server), _records())


def test_a_server_that_cannot_be_reached_is_transient() -> None:
    with fake_server({}) as gone:
        url = gone.url
    with pytest.raises(SinkConfigError) as raised:
        LangfuseSink(public_key="pk", secret_key="sk", base_url=url).check()
    assert raised.value.transient
