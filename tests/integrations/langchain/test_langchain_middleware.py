"""ScoringMiddleware inside real create_agent agents (sync, async, streaming, several instances)."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from agentevals_langchain import ScoringMiddleware

from agentevals import create_scorer
from agentevals.engine import BrokerOptions
from agentevals.sinks import MemorySink


def ask(city: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": city}]}


def wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` seconds pass (a bound, not a timing check)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_middleware_captures_the_run(engine: Any, make_agent: Any) -> None:
    agent = make_agent(ScoringMiddleware(engine=engine), name="weather")
    root_id = uuid.uuid4()
    agent.invoke(
        ask("Paris"), config={"run_id": root_id, "metadata": {"ground_truth": "sunny", "user": "u1"}}
    )
    (run,) = engine.runs
    assert run.run_id == run.trace_id == str(root_id)
    assert run.entity == "weather"
    assert [m.content for m in run.system_messages] == ["You are a weather assistant."]
    assert run.input_text == "Paris" and run.output_text == "It is sunny in Paris and 2+3=5."
    calls = run.output_messages[0].tool_invocations
    assert [(c.tool_name, c.result, c.state) for c in calls] == [
        ("get_weather", "sunny in Paris", "result"),
        ("add", "5", "result"),
    ]
    assert all(c.duration_ms is not None for c in calls)
    assert run.ground_truth == "sunny" and run.metadata["user"] == "u1"
    assert run.metadata["usage"]["total_tokens"] > 0 and run.metadata["model_calls"] == 2
    assert run.duration_ms is not None and run.duration_ms > 0


async def test_async_and_concurrent_runs(engine: Any, make_agent: Any) -> None:
    agent = make_agent(ScoringMiddleware(engine=engine))
    cities = [f"c{i}" for i in range(20)]
    await asyncio.gather(*[agent.ainvoke(ask(c)) for c in cities])
    assert sorted(r.input_text for r in engine.runs) == sorted(cities)
    assert all(r.output_text == f"It is sunny in {r.input_text} and 2+3=5." for r in engine.runs)
    assert len({r.run_id for r in engine.runs}) == 20


def test_streaming(engine: Any, make_agent: Any) -> None:
    agent = make_agent(ScoringMiddleware(engine=engine))
    assert list(agent.stream(ask("Oslo"), stream_mode="updates"))
    (run,) = engine.runs
    assert run.output_text == "It is sunny in Oslo and 2+3=5."


def test_two_instances_have_distinct_names_and_both_score(
    engine: Any, new_engine: Any, make_agent: Any
) -> None:
    other = new_engine()
    first, second = ScoringMiddleware(engine=engine), ScoringMiddleware(engine=other)
    assert first.name != second.name
    make_agent(first, second).invoke(ask("Lima"))
    assert len(engine.runs) == len(other.runs) == 1
    assert engine.runs[0].run_id != other.runs[0].run_id


def test_middleware_never_raises(
    caplog: pytest.LogCaptureFixture, make_agent: Any, exploding_engine: Any
) -> None:
    agent = make_agent(ScoringMiddleware(engine=exploding_engine))
    with caplog.at_level(logging.ERROR, logger="agentevals"):
        result = agent.invoke(ask("Quito"))
    assert result["messages"][-1].text == "It is sunny in Quito and 2+3=5."
    assert "could not submit run" in caplog.text


def test_end_to_end_with_scorers_and_sinks(make_agent: Any) -> None:
    memory = MemorySink()
    short = create_scorer(id="short").generate_score(lambda run, **_: float(len(run.output_text) < 80))
    middleware = ScoringMiddleware(scorers=[short], sinks=[memory])
    agent = make_agent(middleware)
    for city in ("A", "B", "C"):
        agent.invoke(ask(city))
    assert middleware.flush(10)
    middleware.shutdown(10)
    assert [r.score for r in memory.records] == [1.0, 1.0, 1.0]
    assert {r.scorer_id for r in memory.records} == {"short"}


def test_middleware_and_handler_with_the_same_engine_score_each_run_once(
    engine: Any, make_agent: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from agentevals_langchain import ScorerCallbackHandler

    agent = make_agent(ScoringMiddleware(engine=engine), name="weather")
    handler = ScorerCallbackHandler(engine=engine)
    with caplog.at_level(logging.WARNING, logger="agentevals.langchain"):
        for city in ("Paris", "Rome"):
            agent.invoke(ask(city), config={"callbacks": [handler]})
    assert sorted(run.input_text for run in engine.runs) == ["Paris", "Rome"]  # once each, not twice
    warnings = [r.getMessage() for r in caplog.records if "steps aside" in r.getMessage()]
    assert len(warnings) == 1  # said once, not per run
    assert not [r for r in caplog.records if "saw no before_agent" in r.getMessage()]


def test_middleware_and_handler_with_different_scorers_both_score(make_agent: Any) -> None:
    from agentevals_langchain import ScorerCallbackHandler

    always = create_scorer(id="always").generate_score(lambda run, **_: 1.0)
    other = create_scorer(id="other").generate_score(lambda run, **_: 0.5)
    memory = MemorySink()
    middleware = ScoringMiddleware(scorers=[always], sinks=[memory])
    handler = ScorerCallbackHandler(scorers=[other], sinks=[memory])
    make_agent(middleware, name="weather").invoke(ask("Paris"), config={"callbacks": [handler]})
    assert middleware.flush() and handler.flush()
    assert sorted(r.scorer_id for r in memory.records) == ["always", "other"]


def test_a_handler_and_a_middleware_with_their_own_engines_both_score_every_run(
    make_agent: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from agentevals_langchain import ScorerCallbackHandler

    shared = create_scorer(id="shared").generate_score(lambda run, **_: 1.0)
    extra = create_scorer(id="extra").generate_score(lambda run, **_: 0.5)
    by_middleware, by_handler = MemorySink(), MemorySink()
    middleware = ScoringMiddleware(scorers=[shared, extra], sinks=[by_middleware])
    handler = ScorerCallbackHandler(scorers=[shared], sinks=[by_handler])
    agent = make_agent(middleware, name="weather")
    with caplog.at_level(logging.WARNING, logger="agentevals"):
        for city in ("Paris", "Rome", "Oslo", "Lima", "Cairo"):
            agent.invoke(ask(city), config={"callbacks": [handler]})
    assert middleware.flush(10) and handler.flush(10)
    assert Counter(r.scorer_id for r in by_middleware.records) == {"shared": 5, "extra": 5}
    assert Counter(r.scorer_id for r in by_handler.records) == {"shared": 5}
    assert middleware.engine.stats().scored == 10 and handler.engine.stats().scored == 5
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    middleware.shutdown(10)
    handler.shutdown(10)


def test_a_run_whose_tool_raises_is_recorded_with_its_error_and_partial_messages(
    engine: Any, broken_agent: Any
) -> None:
    from agentevals_langchain.testing import ScriptedChatModel
    from langchain.agents import create_agent

    from tests.integrations.langchain.conftest import broken_lookup, broken_reply

    middleware = ScoringMiddleware(engine=engine, failure_grace=60.0)
    agent = create_agent(
        ScriptedChatModel(respond=broken_reply), tools=[broken_lookup], middleware=[middleware], name="lookup"
    )
    with pytest.raises(RuntimeError, match="backend down"):
        agent.invoke(ask("x"))
    assert engine.runs == []  # still within the grace: the agent might have recovered
    middleware.flush()
    (run,) = engine.runs
    assert run.error == "RuntimeError: backend down for x" and run.entity == "lookup"
    assert run.input_text == "x"
    (call,) = run.output_messages[-1].tool_invocations
    assert call.tool_name == "broken_lookup" and "backend down" in str(call.error)


def test_a_failed_run_is_submitted_once_its_grace_is_over_without_another_run_or_flush(engine: Any) -> None:
    from agentevals_langchain.testing import ScriptedChatModel
    from langchain.agents import create_agent

    from tests.integrations.langchain.conftest import broken_lookup, broken_reply

    middleware = ScoringMiddleware(engine=engine, failure_grace=0.05)
    broken = create_agent(
        ScriptedChatModel(respond=broken_reply), tools=[broken_lookup], middleware=[middleware]
    )
    with pytest.raises(RuntimeError):
        broken.invoke(ask("x"))
    assert wait_until(lambda: bool(engine.runs)), "the failed run was never submitted"
    (run,) = engine.runs
    assert run.input_text == "x" and run.error is not None and middleware.open_runs == 0


def test_a_failed_run_lasts_until_its_failure_not_until_it_is_submitted(engine: Any) -> None:
    from agentevals_langchain.testing import ScriptedChatModel
    from langchain.agents import create_agent

    from tests.integrations.langchain.conftest import broken_lookup, broken_reply

    middleware = ScoringMiddleware(engine=engine, failure_grace=60.0)
    broken = create_agent(
        ScriptedChatModel(respond=broken_reply), tools=[broken_lookup], middleware=[middleware]
    )
    started = time.perf_counter()
    with pytest.raises(RuntimeError):
        broken.invoke(ask("x"))
    invoke_ms = (time.perf_counter() - started) * 1000
    time.sleep(0.3)  # the run waits out (part of) its grace before it is submitted: not part of the run
    middleware.flush()
    (run,) = engine.runs
    assert run.duration_ms is not None and 0 < run.duration_ms <= invoke_ms


def test_a_run_the_agent_recovers_from_is_scored_once_without_error(engine: Any) -> None:
    from agentevals_langchain.testing import ScriptedChatModel
    from langchain.agents import create_agent
    from langchain.agents.middleware import ToolRetryMiddleware
    from langchain_core.tools import tool

    attempts: list[int] = []

    @tool
    def flaky(key: str) -> str:
        """A lookup that fails once."""
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError("first attempt fails")
        return "found"

    from tests.integrations.langchain.conftest import tool_call

    def reply(messages: list[Any]) -> Any:
        from langchain_core.messages import AIMessage, HumanMessage

        if isinstance(messages[-1], HumanMessage):
            return AIMessage(content="", tool_calls=[tool_call("flaky", {"key": "k"})])
        return f"Result: {messages[-1].text}"

    middleware = ScoringMiddleware(engine=engine, failure_grace=60.0)
    retry = ToolRetryMiddleware(max_retries=2, initial_delay=0.0, jitter=False)
    agent = create_agent(ScriptedChatModel(respond=reply), tools=[flaky], middleware=[retry, middleware])
    assert agent.invoke(ask("k"))["messages"][-1].text == "Result: found"
    middleware.flush()
    (run,) = engine.runs
    assert run.error is None and run.output_text == "Result: found"
    assert len(attempts) == 2


def test_failed_runs_are_submitted_without_score_errors(engine: Any, broken_agent: Any) -> None:
    from agentevals_langchain.testing import ScriptedChatModel
    from langchain.agents import create_agent

    from tests.integrations.langchain.conftest import broken_lookup, broken_reply

    middleware = ScoringMiddleware(engine=engine, failure_grace=0.0)
    agent = create_agent(
        ScriptedChatModel(respond=broken_reply), tools=[broken_lookup], middleware=[middleware]
    )
    with pytest.raises(RuntimeError):
        agent.invoke(ask("x"))
    middleware.flush()
    (run,) = engine.runs
    assert run.error is not None and run.input_text == "x" and middleware.open_runs == 0


def test_broker_options_make_the_middleware_publish_its_runs(make_agent: Any, redis_queue: Any) -> None:
    import redis

    url, queue = redis_queue
    short = create_scorer(id="short").generate_score(lambda run, **_: float(len(run.output_text) < 80))
    middleware = ScoringMiddleware(scorers=[short], broker=BrokerOptions(url, queue=queue))
    make_agent(middleware).invoke(ask("Paris"))
    assert middleware.flush(10)
    middleware.shutdown(10)
    assert middleware.engine.stats().published == 1
    client = redis.Redis.from_url(url)
    try:
        assert client.llen(f"dramatiq:{queue}") == 1  # one message, waiting for a worker
    finally:
        client.close()


def test_constructor_refuses_what_cannot_work_with_the_fix(engine: Any) -> None:
    with pytest.raises(ValueError, match="failure_grace is in seconds and must be >= 0"):
        ScoringMiddleware(engine=engine, failure_grace=-1.0)
    with pytest.raises(ValueError, match="max_open_runs must be >= 1"):
        ScoringMiddleware(engine=engine, max_open_runs=0)
    with pytest.raises(TypeError, match=r"unknown option brokers=.*broker=.*or a ready engine="):
        ScoringMiddleware(scorers=[create_scorer(id="one").generate_score(lambda **_: 1.0)], brokers="x")
    with pytest.raises(ValueError, match=r"either engine= or broker=, not both"):
        ScoringMiddleware(engine=engine, broker="redis://127.0.0.1:6379/0")
