"""Real LangChain/LangGraph agents and chains, driven by scripted chat models (no network)."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from agentevals_langchain.testing import ScriptedChatModel, tool_call
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool

from agentevals import Run
from agentevals.testing import RecordingEngine


class ExplodingEngine(RecordingEngine):
    """An engine whose submits raise: the integrations must never pass that on to the agent."""

    def submit(self, run: Run) -> bool:
        raise RuntimeError("engine exploded")

    def submit_lazy(self, build: Callable[[], Run], *, run_id: str, trace_id: str | None = None) -> bool:
        raise RuntimeError("engine exploded")


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def broken_lookup(key: str) -> str:
    """A lookup whose backend is down."""
    raise RuntimeError(f"backend down for {key}")


def two_tool_reply(messages: list[BaseMessage]) -> AIMessage | str:
    """Call both tools for the user's city, then answer with their results."""
    last = messages[-1]
    if isinstance(last, HumanMessage):
        return AIMessage(
            content="",
            tool_calls=[tool_call("get_weather", {"city": last.text}), tool_call("add", {"a": 2, "b": 3})],
            additional_kwargs={"reasoning_content": f"I need the weather in {last.text} and a sum."},
        )
    results = [m.text for m in messages if m.type == "tool"]
    return f"It is {results[0]} and 2+3={results[1]}."


def broken_reply(messages: list[BaseMessage]) -> AIMessage | str:
    if isinstance(messages[-1], HumanMessage):
        return AIMessage(content="", tool_calls=[tool_call("broken_lookup", {"key": "x"})])
    return "unreachable"


@pytest.fixture
def engine() -> RecordingEngine:
    return RecordingEngine()


@pytest.fixture
def weather_agent() -> Any:
    model = ScriptedChatModel(respond=two_tool_reply)
    return create_agent(model, tools=[get_weather, add], system_prompt="You are a weather assistant.")


@pytest.fixture
def broken_agent() -> Any:
    return create_agent(
        ScriptedChatModel(respond=broken_reply), tools=[broken_lookup], system_prompt="Look up."
    )


@pytest.fixture
def make_agent() -> Any:
    """``make_agent(*middleware, name=None)``: the two-tool weather agent with the given middleware."""

    def make(*middleware: Any, name: str | None = None) -> Any:
        return create_agent(
            ScriptedChatModel(respond=two_tool_reply),
            tools=[get_weather, add],
            system_prompt="You are a weather assistant.",
            middleware=list(middleware),
            name=name,
        )

    return make


@pytest.fixture
def new_engine() -> Any:
    """A factory of further recording engines."""
    return RecordingEngine


@pytest.fixture
def exploding_engine() -> ExplodingEngine:
    return ExplodingEngine()


@pytest.fixture
def redis_queue() -> Iterator[tuple[str, str]]:
    """``(url, queue)``: the real Redis on 127.0.0.1:6379 and a queue no other test uses, deleted after.
    Skips with the reason when Redis is absent (fails under CI=true, where it must be there)."""
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=2).close()
    except OSError as err:
        reason = f"no Redis on 127.0.0.1:6379 ({err}); start it to run the broker tests"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    import redis

    url, queue = "redis://127.0.0.1:6379/0", f"agentevals_test_{uuid.uuid4().hex[:12]}"
    yield url, queue
    client = redis.Redis.from_url(url)
    try:
        keys = client.keys(f"dramatiq:{queue}*")
        if keys:
            client.delete(*keys)
    finally:
        client.close()
