"""LangGraph / LangChain traced through OpenInference (``openinference-instrumentation-langchain``): the run
the processor builds from the spans equals the one ``ScorerCallbackHandler`` stores for the same
invocation (messages, tool calls, entity, error).

The instrumentor patches LangChain for the whole process, so the scenarios run in a child process (this
file run as a script) that prints both runs of each scenario as JSON; the tests compare them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from typing import Any

import pytest
from conftest import require

require("openinference.instrumentation.langchain", "openinference-instrumentation-langchain is not installed")

Summary = dict[str, Any]


@pytest.fixture(scope="module")
def scenarios() -> dict[str, dict[str, Any]]:
    proc = subprocess.run([sys.executable, __file__], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("name", ["agent", "agent_async", "failing_tool", "chain"])
def test_the_run_equals_the_callback_handlers(scenarios: dict[str, dict[str, Any]], name: str) -> None:
    scenario = scenarios[name]
    (handler,) = scenario["handler"]
    (otel,) = scenario["otel"]
    assert otel == handler
    assert scenario["skipped"] == {}


def test_the_agent_run_has_its_tools_and_entity(scenarios: dict[str, dict[str, Any]]) -> None:
    (run,) = scenarios["agent"]["otel"]
    assert run["entity"] == "weather"
    assert run["system"] == ["You are a weather assistant."]
    assert run["input"] == "Paris"
    assert run["output"][0]["calls"] == [
        ["get_weather", {"city": "Paris"}, "sunny in Paris", "result", None],
        ["add", {"a": 2, "b": 3}, "5", "result", None],
    ]
    assert run["output"][-1]["content"] == "It is sunny in Paris and 2+3=5."
    assert scenarios["agent"]["models"] == ["scripted-chat-model"]


def test_a_failing_tool_fails_the_run(scenarios: dict[str, dict[str, Any]]) -> None:
    (run,) = scenarios["failing_tool"]["otel"]
    assert run["error"] == "RuntimeError: backend down for x"
    (call,) = run["output"][0]["calls"]
    assert call[3:] == ["error", "RuntimeError: backend down for x"]


# -- the child process ------------------------------------------------------------------------------


def _summary(run: Any) -> Summary:
    """What both captures must agree on: entity, error, system prompt, input, turns with their calls."""
    return {
        "entity": run.entity,
        "error": run.error,
        "system": [m.content for m in run.system_messages],
        "input": run.input_text,
        "remembered": [(m.role, m.content) for m in run.remembered_messages],
        "output": [
            {
                "role": m.role,
                "content": m.content,
                "calls": [[t.tool_name, t.args, t.result, t.state, t.error] for t in m.tool_invocations],
            }
            for m in run.output_messages
        ],
    }


def _run_scenarios() -> dict[str, dict[str, Any]]:
    from agentevals_langchain import ScorerCallbackHandler
    from agentevals_langchain.testing import ScriptedChatModel, tool_call
    from agentevals_otel import ScoringSpanProcessor
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.tools import tool
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.sdk.trace import TracerProvider

    from agentevals.testing import RecordingEngine

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

    def two_tools(messages: list[BaseMessage]) -> AIMessage | str:
        last = messages[-1]
        if isinstance(last, HumanMessage):
            calls = [tool_call("get_weather", {"city": last.text}), tool_call("add", {"a": 2, "b": 3})]
            return AIMessage(content="", tool_calls=calls)
        results = [m.text for m in messages if m.type == "tool"]
        return f"It is {results[0]} and 2+3={results[1]}."

    def broken(messages: list[BaseMessage]) -> AIMessage | str:
        return AIMessage(content="", tool_calls=[tool_call("broken_lookup", {"key": "x"})])

    otel_engine = RecordingEngine()
    provider = TracerProvider(shutdown_on_exit=False)
    processor = ScoringSpanProcessor(engine=otel_engine)
    provider.add_span_processor(processor)
    LangChainInstrumentor().instrument(tracer_provider=provider)
    request = {"messages": [{"role": "user", "content": "Paris"}]}

    def weather() -> Any:
        model = ScriptedChatModel(respond=two_tools)
        return create_agent(
            model, [get_weather, add], system_prompt="You are a weather assistant.", name="weather"
        )

    def agent(handler: Any) -> None:
        weather().invoke(request, config={"callbacks": [handler]})

    def agent_async(handler: Any) -> None:
        asyncio.run(weather().ainvoke(request, config={"callbacks": [handler]}))

    def failing_tool(handler: Any) -> None:
        failing = create_agent(ScriptedChatModel(respond=broken), [broken_lookup], system_prompt="Look up.")
        with contextlib.suppress(RuntimeError):
            failing.invoke(request, config={"callbacks": [handler]})

    def chain(handler: Any) -> None:
        prompt = ChatPromptTemplate.from_messages([("system", "Answer in one word."), ("user", "{question}")])
        runnable = prompt | ScriptedChatModel(respond=lambda messages: "Paris")
        runnable.invoke({"question": "Capital of France?"}, config={"callbacks": [handler]})

    results = {}
    for scenario in (agent, agent_async, failing_tool, chain):
        handler_engine = RecordingEngine()
        otel_engine.runs.clear()
        scenario(ScorerCallbackHandler(engine=handler_engine))
        results[scenario.__name__] = {
            "handler": [_summary(run) for run in handler_engine.runs],
            "otel": [_summary(run) for run in otel_engine.runs],
            "models": [model for run in otel_engine.runs for model in run.metadata["models"]],
            "skipped": processor.skipped(),
        }
    return results


if __name__ == "__main__":
    print(json.dumps(_run_scenarios()))
