"""Concurrent agent runs do not mix, in separate traces or in one; memory stays bounded when traces never
end."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agentevals_otel import ScoringSpanProcessor
from conftest import require, weather_run
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Tracer, set_span_in_context

from agentevals.testing import RecordingEngine

require("pydantic_ai", "pydantic-ai is not installed (uv sync --all-packages)")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.capabilities import Instrumentation  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402  # noqa: E402
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.models.instrumented import InstrumentationSettings  # noqa: E402

RUNS = 50


def echo_agent(provider: TracerProvider) -> Agent[None, str]:
    """An agent whose model asks the tool to look up the user's word, then answers with the result."""

    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(0)  # let the other runs interleave
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        part = last.parts[-1]
        if isinstance(part, UserPromptPart):
            return ModelResponse(parts=[ToolCallPart("lookup", {"word": str(part.content)})])
        assert isinstance(part, ToolReturnPart)
        return ModelResponse(parts=[TextPart(f"answer for {part.content}")])

    settings = InstrumentationSettings(tracer_provider=provider)
    agent: Agent[None, str] = Agent(FunctionModel(model), capabilities=[Instrumentation(settings=settings)])

    @agent.tool_plain
    async def lookup(word: str) -> str:
        """Look a word up."""
        await asyncio.sleep(0)
        return f"looked-up {word}"

    return agent


def assert_unmixed(runs: list[Any]) -> None:
    assert len(runs) == RUNS
    for run in runs:
        word = run.input_text
        (call,) = run.output_messages[0].tool_invocations
        assert (call.args, call.result) == ({"word": word}, f"looked-up {word}")
        assert run.output_text == f"answer for looked-up {word}"
    assert sorted(run.input_text for run in runs) == sorted(f"word-{i}" for i in range(RUNS))


async def run_all(agent: Agent[None, str]) -> None:
    await asyncio.gather(*(agent.run(f"word-{i}") for i in range(RUNS)))


def test_fifty_concurrent_runs_each_in_its_own_trace(
    provider: TracerProvider, engine: RecordingEngine
) -> None:
    asyncio.run(run_all(echo_agent(provider)))
    assert_unmixed(engine.runs)
    assert len({run.trace_id for run in engine.runs}) == RUNS


def test_fifty_concurrent_runs_inside_one_application_span(
    provider: TracerProvider, engine: RecordingEngine, processor: ScoringSpanProcessor
) -> None:
    with provider.get_tracer("my-app").start_as_current_span("batch"):
        asyncio.run(run_all(echo_agent(provider)))
        assert_unmixed(engine.runs)
    assert len({run.trace_id for run in engine.runs}) == 1
    assert processor.open_traces == 0


def test_fifty_runs_from_threads(tracer: Tracer, engine: RecordingEngine) -> None:
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda i: weather_run(tracer, f"city-{i}"), range(RUNS)))
    assert sorted(run.input_text for run in engine.runs) == sorted(
        f"Weather in city-{i}?" for i in range(RUNS)
    )
    assert all(run.output_text == f"It is sunny in {run.input_text[11:-1]}." for run in engine.runs)


def test_memory_stays_bounded_when_traces_never_end(engine: RecordingEngine) -> None:
    processor = ScoringSpanProcessor(engine=engine)  # at most 10,000 open traces
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("framework")

    def abandon(count: int) -> None:
        for _ in range(count):  # an agent that never ends, with a model call that did
            agent = tracer.start_span("invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent"})
            tracer.start_span(
                "chat", context=set_span_in_context(agent), attributes={"gen_ai.operation.name": "chat"}
            ).end()

    tracemalloc.start()
    try:
        abandon(12_000)
        gc.collect()
        full = tracemalloc.get_traced_memory()[0]
        abandon(12_000)
        gc.collect()
        later = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert processor.open_traces == 10_000
    assert processor.skipped() == {"overflowed traces": 14_000}
    assert later < full * 1.05  # twice the traces, the same memory
    assert engine.runs == []
