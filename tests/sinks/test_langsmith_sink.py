"""LangSmithSink against a fake LangSmith API on 127.0.0.1 (POST /feedback, PATCH /feedback/{id},
GET /sessions, GET /info): request bodies, idempotent re-sends, permanent and transient errors."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fake_http import FakeServer, fake_server

from agentevals.results import ScoreFailure, ScoreResult, ScoreSkipped
from agentevals.sinks import LangSmithSink, PartialWriteError, SinkConfigError, is_permanent
from agentevals.sinks._langsmith import feedback_id

RUN = str(uuid.uuid4())
PROJECT = str(uuid.uuid4())
ROUTES = {
    ("GET", "/info"): (200, {"version": "0.10.0"}),
    ("GET", "/sessions"): (200, []),
    ("POST", "/feedback"): (200, {}),
}


@pytest.fixture(autouse=True)
def _no_langsmith_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGSMITH_ENDPOINT", "LANGCHAIN_ENDPOINT",
                 "LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGSMITH_PROJECT"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with fake_server(ROUTES) as state:
        yield state


def _sink(server: FakeServer) -> LangSmithSink:
    return LangSmithSink(api_url=server.url, api_key="lsv2-test", project_id=PROJECT)


def _records() -> list[ScoreResult | ScoreFailure | ScoreSkipped]:
    common = {"scorer_name": "s", "run_id": RUN, "trace_id": RUN}
    return [
        ScoreResult(scorer_id="exact", score=1.0, reason="matches", **common),
        ScoreFailure(scorer_id="judge", error_type="TimeoutError", error_message="no answer", **common),
        ScoreSkipped(scorer_id="grounded", skip_reason="no_context", reason="no retrieved context", **common),
    ]


def test_one_feedback_per_record_with_key_score_comment_and_run(server: FakeServer) -> None:
    records = _records()
    asyncio.run(_sink(server).write(records))
    scored, failed, skipped = server.sent("POST", "/feedback")
    assert (scored["key"], scored["score"], scored["comment"]) == ("exact", 1.0, "matches")
    assert scored["run_id"] == RUN and scored["id"] == str(feedback_id(records[0]))
    assert scored["extra"]["outcome"] == "scored" and "error" not in scored
    assert scored["session_id"] == PROJECT
    assert failed["key"] == "judge" and "score" not in failed and failed["error"] is True
    assert failed["comment"] == "TimeoutError: no answer" and failed["extra"]["error_type"] == "TimeoutError"
    assert skipped["key"] == "grounded" and "score" not in skipped
    assert skipped["comment"] == "skipped (no_context): no retrieved context"
    assert skipped["extra"] == {"outcome": "skipped", "agentevals_run_id": RUN, "skip_reason": "no_context"}
    headers = next(r.headers for r in server.requests if r.path == "/feedback")
    assert headers["x-api-key"] == "lsv2-test"


def test_a_resent_batch_has_the_same_ids_and_a_conflict_updates_in_place(server: FakeServer) -> None:
    sink, records = _sink(server), _records()
    asyncio.run(sink.write(records))
    first = [body["id"] for body in server.sent("POST", "/feedback")]
    server.routes[("POST", "/feedback")] = (409, {"detail": "exists"})
    for record in records:
        server.routes[("PATCH", f"/feedback/{feedback_id(record)}")] = (200, {})
    asyncio.run(sink.write(records))
    assert [body["id"] for body in server.sent("POST", "/feedback")] == first * 2
    assert len(set(first)) == 3
    assert server.sent("PATCH", f"/feedback/{first[0]}") == [{"score": 1.0, "comment": "matches"}]


def test_the_id_depends_on_run_scorer_and_version() -> None:
    base = _records()[0]
    assert feedback_id(base) != feedback_id(base.model_copy(update={"run_id": str(uuid.uuid4())}))
    assert feedback_id(base) != feedback_id(base.model_copy(update={"scorer_id": "other"}))
    assert feedback_id(base) == feedback_id(base.model_copy(update={"score": 0.0, "reason": "x"}))


def test_check_passes_with_an_accepted_key(server: FakeServer) -> None:
    _sink(server).check()
    assert any(r.path == "/sessions" for r in server.requests)


def test_check_without_a_key_says_how_to_set_one(server: FakeServer) -> None:
    with pytest.raises(SinkConfigError, match="LANGSMITH_API_KEY"):
        LangSmithSink(api_url=server.url).check()


def test_a_401_is_permanent(server: FakeServer) -> None:
    server.status = 401
    with pytest.raises(SinkConfigError, match="refused the API key"):
        _sink(server).check()
    with pytest.raises(SinkConfigError) as raised:
        asyncio.run(_sink(server).write(_records()))
    assert is_permanent(raised.value)


def test_a_503_is_transient_and_not_retried_by_the_client(server: FakeServer) -> None:
    server.status = 503
    with pytest.raises(Exception) as raised:
        asyncio.run(_sink(server).write(_records()[:1]))
    assert not isinstance(raised.value, SinkConfigError) and not is_permanent(raised.value)
    assert len(server.sent("POST", "/feedback")) == 1  # the engine retries, not the client


def test_a_failure_mid_batch_resends_only_the_rest(server: FakeServer) -> None:
    server.script = [200, 503]
    records = _records()
    with pytest.raises(PartialWriteError) as raised:
        asyncio.run(_sink(server).write(records))
    assert raised.value.failed == records[1:] and not is_permanent(raised.value)
    assert len(server.sent("POST", "/feedback")) == 2


def test_a_run_id_that_is_not_a_uuid_is_dead_lettered_alone(server: FakeServer) -> None:
    records = [*_records()[:1], _records()[0].model_copy(update={"run_id": "not-a-uuid"})]
    with pytest.raises(PartialWriteError) as raised:
        asyncio.run(_sink(server).write(records))
    assert raised.value.failed == records[1:] and is_permanent(raised.value)
    assert len(server.sent("POST", "/feedback")) == 1


def test_the_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="timeout"):
        LangSmithSink(timeout=0)


# -- a LangChain agent traced by LangSmith: the feedback lands on the agent's LangSmith run ---------------


class _TracedRuns(dict[tuple[str, str], tuple[int, Any]]):
    """The fake's routes, plus ``PATCH /runs/{id}`` for any id (the tracer ending a run it created)."""

    def get(self, key: tuple[str, str], default: Any = None) -> Any:
        if key[0] == "PATCH" and key[1].startswith("/runs/"):
            return (200, {})
        return super().get(key, default)


def _traced_agent_feedback(server: FakeServer, scoring: str) -> tuple[list[Any], list[Any]]:
    """Run a create_agent agent traced to the fake LangSmith by LangChainTracer, scored by the handler or
    the middleware into a LangSmithSink on the same server; the runs the tracer posted and the feedback."""
    from agentevals_langchain import ScorerCallbackHandler, ScoringMiddleware
    from agentevals_langchain.testing import ScriptedChatModel
    from langchain.agents import create_agent
    from langchain_core.tracers import LangChainTracer
    from langsmith import Client

    from agentevals import ScoringEngine
    from agentevals.scorers import create_exact_match_scorer

    server.routes = _TracedRuns({**server.routes, ("POST", "/runs"): (200, {})})
    engine = ScoringEngine([create_exact_match_scorer()], sinks=[_sink(server)])
    tracer = LangChainTracer(client=Client(api_url=server.url, api_key="lsv2-test", auto_batch_tracing=False))
    model = ScriptedChatModel(respond=lambda messages: "Paris")
    callbacks: list[Any] = [tracer]
    if scoring == "handler":
        agent = create_agent(model)
        callbacks.append(ScorerCallbackHandler(engine=engine))
    else:
        agent = create_agent(model, middleware=[ScoringMiddleware(engine=engine)])
    agent.invoke(
        {"messages": [("user", "Capital of France?")]},
        config={"callbacks": callbacks, "metadata": {"ground_truth": "Paris"}},
    )
    tracer.wait_for_futures()
    engine.flush()
    engine.shutdown()
    return server.sent("POST", "/runs"), server.sent("POST", "/feedback")


@pytest.mark.parametrize("scoring", ["handler", "middleware"])
def test_a_langsmith_traced_agents_feedback_lands_on_its_run(server: FakeServer, scoring: str) -> None:
    runs, feedback = _traced_agent_feedback(server, scoring)
    (agent_run,) = [run for run in runs if run.get("parent_run_id") is None]
    assert agent_run["name"] == "LangGraph"  # the agent's own run, the root of the LangSmith trace
    (scored,) = feedback
    assert (scored["run_id"], scored["key"], scored["score"]) == (agent_run["id"], "exact_match", 1.0)
