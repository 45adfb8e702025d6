"""pydantic-ai agents traced with their own OpenTelemetry instrumentation (GenAI semantic conventions):
the runs the processor stores match what the agent did, message for message."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import require

from agentevals.testing import RecordingEngine

require("pydantic_ai", "pydantic-ai is not installed (uv sync --all-packages)")

from agentevals_otel import ScoringSpanProcessor  # noqa: E402
from opentelemetry import baggage, context  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from pydantic import BaseModel  # noqa: E402
from pydantic_ai import Agent, ModelRetry  # noqa: E402
from pydantic_ai.capabilities import Instrumentation  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.models.instrumented import InstrumentationSettings  # noqa: E402
from pydantic_ai.models.test import TestModel  # noqa: E402

from agentevals import Message, Run, ScoringEngine  # noqa: E402
from agentevals.scorers import create_includes_scorer  # noqa: E402
from agentevals.sinks import MemorySink, OTelSink  # noqa: E402

Turn = tuple[str, str, tuple[tuple[str, Any, Any, str], ...]]


def traced(provider: TracerProvider, model: Any, version: int = 5, **options: Any) -> Agent[None, Any]:
    settings = InstrumentationSettings(tracer_provider=provider, version=version)  # type: ignore[arg-type]
    agent: Agent[None, Any] = Agent(model, capabilities=[Instrumentation(settings=settings)], **options)
    return agent


def weather_agent(provider: TracerProvider, version: int = 5) -> Agent[None, Any]:
    agent = traced(provider, TestModel(), version, name="weather", instructions="Report the weather.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    @agent.tool_plain
    def get_temperature(city: str) -> dict[str, Any]:
        """The temperature in a city."""
        return {"city": city, "celsius": 21}

    return agent


def expected_turns(messages: list[ModelMessage]) -> list[Turn]:
    """pydantic-ai's messages as (role, text, tool calls as (name, args, result, state)) turns."""
    results: dict[str, tuple[Any, str]] = {}
    for message in messages:
        for part in message.parts if isinstance(message, ModelRequest) else ():
            if isinstance(part, ToolReturnPart):  # a retried or failed call is an error
                results[part.tool_call_id] = (
                    part.content,
                    "result" if part.outcome == "success" else "error",
                )
    turns: list[Turn] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    turns.append(("user", str(part.content), ()))
                elif isinstance(part, SystemPromptPart):
                    turns.append(("system", part.content, ()))
        elif isinstance(message, ModelResponse):
            text = "".join(p.content for p in message.parts if isinstance(p, TextPart))
            calls = tuple(
                (p.tool_name, p.args_as_dict(), *results.get(p.tool_call_id, (None, "call")))
                for p in message.parts
                if isinstance(p, ToolCallPart)
            )
            turns.append(("assistant", text, calls))
    return turns


def stored_turns(run: Run) -> list[Turn]:
    messages: list[Message] = [*run.remembered_messages, *run.input_messages, *run.output_messages]
    return [
        (m.role, m.content, tuple((t.tool_name, t.args, t.result, t.state) for t in m.tool_invocations))
        for m in messages
    ]


@pytest.mark.parametrize("version", [5, 6])
def test_tool_calls_match_the_agents_messages(
    provider: TracerProvider, engine: RecordingEngine, version: int
) -> None:
    result = weather_agent(provider, version).run_sync("What is the weather?")
    (run,) = engine.runs
    assert stored_turns(run) == expected_turns(result.all_messages())
    calls = run.output_messages[0].tool_invocations
    assert [(c.tool_name, c.result) for c in calls] == [
        ("get_weather", "sunny in a"),
        ("get_temperature", {"city": "a", "celsius": 21}),
    ]
    assert all(c.state == "result" and c.duration_ms is not None for c in calls)
    assert [m.content for m in run.system_messages] == ["Report the weather."]
    assert run.entity == "weather" and run.error is None
    assert run.metadata["models"] == ["test"] and run.metadata["model_calls"] == 2
    usage = result.usage
    assert run.metadata["usage"]["input_tokens"] == usage.input_tokens
    assert run.metadata["usage"]["output_tokens"] == usage.output_tokens


def test_the_async_run_and_a_conversation_with_history(
    provider: TracerProvider, engine: RecordingEngine
) -> None:
    agent = weather_agent(provider)
    first = agent.run_sync("Weather in Paris?")
    second = asyncio.run(agent.run("And tomorrow?", message_history=first.all_messages()))
    run = engine.runs[1]
    assert stored_turns(run) == expected_turns(second.all_messages())
    assert run.input_text == "And tomorrow?"
    assert [m.content for m in run.remembered_messages if m.role == "user"] == ["Weather in Paris?"]


def test_a_tool_that_raises_fails_the_run_with_the_tools_error(
    provider: TracerProvider, engine: RecordingEngine
) -> None:
    agent = traced(provider, TestModel(), name="lookup")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    @agent.tool_plain(sequential=True)  # after get_weather ended: a failure would cancel a tool still running
    def lookup(key: str) -> str:
        """A lookup whose backend is down."""
        raise RuntimeError("backend down")

    with pytest.raises(RuntimeError, match="backend down"):
        agent.run_sync("Look it up")
    (run,) = engine.runs
    assert run.error == "RuntimeError: backend down"
    assert run.input_text == "Look it up"
    calls = {c.tool_name: c for c in run.output_messages[0].tool_invocations}
    assert (calls["get_weather"].state, calls["get_weather"].result) == ("result", "sunny in a")
    assert (calls["lookup"].state, calls["lookup"].error) == ("error", "RuntimeError: backend down")


def test_a_tool_asking_for_a_retry_keeps_both_calls(
    provider: TracerProvider, engine: RecordingEngine
) -> None:
    agent = traced(provider, TestModel(), name="retrying")
    attempts: list[str] = []

    @agent.tool_plain
    def flaky(key: str) -> str:
        """Works on the second try."""
        attempts.append(key)
        if len(attempts) == 1:
            raise ModelRetry("try again")
        return "done"

    result = agent.run_sync("Go")
    (run,) = engine.runs
    assert stored_turns(run) == expected_turns(result.all_messages())
    first, second = [c for m in run.output_messages for c in m.tool_invocations]
    assert (first.tool_name, first.state, second.tool_name, second.result) == (
        "flaky",
        "error",
        "flaky",
        "done",
    )
    assert first.error is not None and "try again" in first.error


def test_a_streamed_run(provider: TracerProvider, engine: RecordingEngine) -> None:
    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("unused")])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        for word in ("It ", "is ", "sunny."):
            yield word

    agent = traced(provider, FunctionModel(reply, stream_function=stream), name="streamer")

    async def run_stream() -> list[ModelMessage]:
        async with agent.run_stream("Weather?") as result:
            chunks = [chunk async for chunk in result.stream_text(delta=True)]
        assert "".join(chunks) == "It is sunny."
        return result.all_messages()

    messages = asyncio.run(run_stream())
    (run,) = engine.runs
    assert stored_turns(run) == expected_turns(messages)
    assert (run.input_text, run.output_text, run.entity) == ("Weather?", "It is sunny.", "streamer")


class City(BaseModel):
    name: str
    country: str


def test_a_structured_output_ends_the_run_with_its_json(
    provider: TracerProvider, engine: RecordingEngine
) -> None:
    agent = traced(
        provider, TestModel(custom_output_args={"name": "Paris", "country": "France"}), output_type=City
    )
    result = agent.run_sync("Capital of France?")
    assert result.output == City(name="Paris", country="France")
    (run,) = engine.runs
    *conversation, final = stored_turns(run)
    assert conversation == expected_turns(result.all_messages())
    assert final == ("assistant", '{"name":"Paris","country":"France"}', ())
    assert run.output_messages[0].tool_invocations[0].tool_name == "final_result"


def test_scored_live_with_ground_truth_from_baggage_and_events_on_the_agents_span() -> None:
    spans = InMemorySpanExporter()
    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    memory = MemorySink()
    engine = ScoringEngine(
        [create_includes_scorer()], sinks=[memory, OTelSink(logger_provider=logger_provider)]
    )
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(spans))
    provider.add_span_processor(ScoringSpanProcessor(engine=engine))
    agent = traced(provider, TestModel(custom_output_text="It is sunny in Paris."), name="weather")

    token = context.attach(baggage.set_baggage("agentevals.ground_truth", "sunny"))
    try:
        agent.run_sync("Weather in Paris?")
    finally:
        context.detach(token)
    assert provider.force_flush()

    (record,) = memory.records
    assert (record.scorer_id, record.score, record.entity) == ("includes", 1.0, "weather")
    (agent_span,) = [s for s in spans.get_finished_spans() if s.name.startswith("invoke_agent")]
    (event,) = [data.log_record for data in logs.get_finished_logs()]
    assert (event.trace_id, event.span_id) == (agent_span.context.trace_id, agent_span.context.span_id)
    engine.shutdown()
