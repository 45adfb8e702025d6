"""The older GenAI form, one span event per message (``gen_ai.user.message``, ``gen_ai.choice``...), and
messages with plain ``content`` instead of ``parts``."""

from __future__ import annotations

import json

from conftest import agent_span
from opentelemetry.trace import Tracer

from agentevals.testing import RecordingEngine


def test_messages_in_span_events(tracer: Tracer, engine: RecordingEngine) -> None:
    weather_call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
    }
    with (
        agent_span(tracer, "events"),
        tracer.start_as_current_span("chat old-model", attributes={"gen_ai.operation.name": "chat"}) as span,
    ):
        span.add_event("gen_ai.system.message", {"content": "Report the weather."})
        span.add_event("gen_ai.user.message", {"content": "Weather in Oslo?"})
        span.add_event("gen_ai.assistant.message", {"tool_calls": json.dumps([weather_call])})
        span.add_event("gen_ai.tool.message", {"id": "c1", "content": "light snow"})
        span.add_event(
            "gen_ai.choice",
            {
                "index": 0,
                "finish_reason": "stop",
                "message": json.dumps({"role": "assistant", "content": "Snow."}),
            },
        )
    (run,) = engine.runs
    assert [m.content for m in run.system_messages] == ["Report the weather."]
    assert run.input_text == "Weather in Oslo?"
    asked, answered = run.output_messages
    (invocation,) = asked.tool_invocations
    assert (invocation.tool_name, invocation.args, invocation.result) == (
        "get_weather",
        {"city": "Oslo"},
        "light snow",
    )
    assert (answered.role, answered.content) == ("assistant", "Snow.")


def test_a_choice_event_with_flat_fields(tracer: Tracer, engine: RecordingEngine) -> None:
    with tracer.start_as_current_span("chat", attributes={"gen_ai.operation.name": "chat"}) as span:
        span.add_event("gen_ai.user.message", {"content": "hi"})
        span.add_event("gen_ai.choice", {"index": 0, "content": "hello"})
    (run,) = engine.runs
    assert (run.input_text, run.output_text) == ("hi", "hello")


def test_messages_with_plain_content(tracer: Tracer, engine: RecordingEngine) -> None:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system_instructions": "Be brief.",
        "gen_ai.input.messages": json.dumps([{"role": "user", "content": "hi"}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": "hello"}]),
    }
    with tracer.start_as_current_span("chat", attributes=attributes):
        pass
    (run,) = engine.runs
    assert ([m.content for m in run.system_messages], run.input_text, run.output_text) == (
        ["Be brief."],
        "hi",
        "hello",
    )


def test_reasoning_parts_and_a_tool_result_list(tracer: Tracer, engine: RecordingEngine) -> None:
    outputs = [
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": "The user wants cities."},
                {"type": "tool_call", "id": "c1", "name": "cities", "arguments": {"country": "FR"}},
            ],
        }
    ]
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "Cities?"}]}]
        ),
        "gen_ai.output.messages": json.dumps(outputs),
    }
    with agent_span(tracer):
        with tracer.start_as_current_span("chat", attributes=attributes):
            pass
        with tracer.start_as_current_span(
            "execute_tool cities",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "cities",
                "gen_ai.tool.call.id": "c1",
            },
        ) as span:
            span.set_attribute("gen_ai.tool.call.result", json.dumps(["Paris", "Lyon"]))
    (run,) = engine.runs
    (asked,) = run.output_messages
    assert asked.reasoning == "The user wants cities."
    assert asked.tool_invocations[0].result == ["Paris", "Lyon"]
