"""The OpenAI Agents SDK with its model on the local fake OpenAI-compatible server, traced through
OpenInference (``openinference-instrumentation-openai-agents``): tools, a handoff, a failing tool.

The instrumentor replaces the SDK's process-wide trace processors, so the scenarios run in a child process
(this file run as a script) that prints the runs as JSON.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest
from conftest import require

require("agents", "openai-agents is not installed (uv sync --all-packages)")
require(
    "openinference.instrumentation.openai_agents",
    "openinference-instrumentation-openai-agents is not installed",
)


@pytest.fixture(scope="module")
def scenarios() -> dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_a_handoff_and_tools_make_one_run_of_the_whole_workflow(scenarios: dict[str, Any]) -> None:
    (run,) = scenarios["handoff"]["runs"]
    assert run["entity"] == "triage"
    assert run["error"] is None
    assert run["system"] == ["Report the weather."]  # the agent that answered
    assert run["input"] == "Weather in Paris?"
    handoff, tools, answer = run["output"]
    assert handoff["calls"] == [
        ["transfer_to_weather_agent", {}, {"assistant": "weather_agent"}, "result", None]
    ]
    weather, broken = tools["calls"]
    assert weather == ["get_weather", {"city": "Paris"}, "sunny in Paris", "result", None]
    assert broken[:2] == ["broken_lookup", {"key": "x"}] and broken[3] == "error"
    assert "backend down" in broken[2] and "backend down" in broken[4]
    assert answer == {"role": "assistant", "content": "It is sunny in Paris.", "calls": []}
    assert run["model_calls"] == 3 and run["models"] == ["fake-agent"]
    assert all(duration is not None for duration in run["tool_durations"][1:])  # the tools' own spans
    assert scenarios["handoff"]["skipped"] == {}


def test_concurrent_async_runs_do_not_mix(scenarios: dict[str, Any]) -> None:
    runs = scenarios["concurrent"]["runs"]
    assert sorted((run["input"], run["output"][-1]["content"]) for run in runs) == [
        (f"Weather in {city}?", f"It is sunny in {city}.") for city in sorted(CITIES)
    ]
    assert all(run["output"][0]["calls"][0][1] == {"city": run["input"][11:-1]} for run in runs)


CITIES = ("Oslo", "Paris", "Rome", "Lima")


# -- the child process ------------------------------------------------------------------------------


def _summary(run: Any) -> dict[str, Any]:
    return {
        "entity": run.entity,
        "error": run.error,
        "system": [m.content for m in run.system_messages],
        "input": run.input_text,
        "output": [
            {
                "role": m.role,
                "content": m.content,
                "calls": [[t.tool_name, t.args, t.result, t.state, t.error] for t in m.tool_invocations],
            }
            for m in run.output_messages
        ],
        "tool_durations": [t.duration_ms for m in run.output_messages for t in m.tool_invocations],
        "model_calls": run.metadata["model_calls"],
        "models": run.metadata["models"],
    }


def _run_scenarios() -> dict[str, Any]:
    from agentevals_otel import ScoringSpanProcessor
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
    from openai import AsyncOpenAI
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    from opentelemetry.sdk.trace import TracerProvider

    from agentevals.testing import ChatRequest, FakeJudgeServer, RecordingEngine, Reply, ToolCall

    engine = RecordingEngine()
    provider = TracerProvider(shutdown_on_exit=False)
    processor = ScoringSpanProcessor(engine=engine)
    provider.add_span_processor(processor)
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    @function_tool
    def broken_lookup(key: str) -> str:
        """A lookup whose backend is down."""
        raise RuntimeError("backend down")

    def model(server: FakeJudgeServer) -> OpenAIChatCompletionsModel:
        client = AsyncOpenAI(base_url=server.url, api_key="fake-key", max_retries=0)
        return OpenAIChatCompletionsModel(model=server.agent_model, openai_client=client)

    results: dict[str, Any] = {}
    both = Reply(
        content=None,
        tool_calls=(ToolCall("get_weather", {"city": "Paris"}), ToolCall("broken_lookup", {"key": "x"})),
    )
    script = [Reply.tool_call("transfer_to_weather_agent"), both, "It is sunny in Paris."]
    with FakeJudgeServer(agent_script=script) as server:
        weather = Agent(
            name="weather_agent",
            instructions="Report the weather.",
            tools=[get_weather, broken_lookup],
            model=model(server),
        )
        triage = Agent(
            name="triage", instructions="Route the question.", handoffs=[weather], model=model(server)
        )
        Runner.run_sync(triage, "Weather in Paris?")
    results["handoff"] = {"runs": [_summary(r) for r in engine.runs], "skipped": processor.skipped()}

    def answer(request: ChatRequest) -> Reply:
        if not request.tool_results:
            return Reply.tool_call("get_weather", city=request.prompt.split()[-1].rstrip("?"))
        return Reply.text(f"It is {request.tool_results[-1]}.")

    engine.runs.clear()
    with FakeJudgeServer(agent_responder=answer) as server:
        agent = Agent(
            name="weather_agent", instructions="Report the weather.", tools=[get_weather], model=model(server)
        )

        async def all_cities() -> None:
            await asyncio.gather(*(Runner.run(agent, f"Weather in {city}?") for city in CITIES))

        asyncio.run(all_cities())
    results["concurrent"] = {"runs": [_summary(r) for r in engine.runs], "skipped": processor.skipped()}
    return results


if __name__ == "__main__":
    print(json.dumps(_run_scenarios()))
