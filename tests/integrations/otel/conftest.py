"""Span processors on real TracerProviders, spans from hand-made GenAI / OpenInference trees and from real
frameworks (no network)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from agentevals_otel import ScoringSpanProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Span, Status, StatusCode, Tracer

from agentevals.testing import RecordingEngine


@pytest.fixture
def engine() -> RecordingEngine:
    return RecordingEngine()


@pytest.fixture
def processor(engine: RecordingEngine) -> ScoringSpanProcessor:
    return ScoringSpanProcessor(engine=engine)


@pytest.fixture
def provider(processor: ScoringSpanProcessor) -> Iterator[TracerProvider]:
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(processor)
    yield provider


@pytest.fixture
def tracer(provider: TracerProvider) -> Tracer:
    """A tracer of the GenAI instrumentation scope the hand-made spans come from."""
    return provider.get_tracer("an-agent-framework")


def text(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content}


def message(role: str, *parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "parts": list(parts)}


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def response(call_id: str, name: str, result: Any) -> dict[str, Any]:
    return {"type": "tool_call_response", "id": call_id, "name": name, "response": result}


@contextmanager
def agent_span(tracer: Tracer, name: str = "weather", **attributes: Any) -> Iterator[Span]:
    with tracer.start_as_current_span(
        f"invoke_agent {name}",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name},
    ) as span:
        span.set_attributes(attributes)
        yield span


def chat(
    tracer: Tracer,
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    *,
    system: str | None = None,
    model: str = "gpt-test",
    usage: tuple[int, int] = (10, 5),
) -> None:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model,
        "gen_ai.input.messages": json.dumps(inputs),
        "gen_ai.output.messages": json.dumps(outputs),
        "gen_ai.usage.input_tokens": usage[0],
        "gen_ai.usage.output_tokens": usage[1],
    }
    if system is not None:
        attributes["gen_ai.system_instructions"] = json.dumps([text(system)])
    with tracer.start_as_current_span(f"chat {model}", attributes=attributes):
        pass


def tool(
    tracer: Tracer, call_id: str, name: str, arguments: dict[str, Any], result: Any = None, error: str = ""
) -> None:
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.call.arguments": json.dumps(arguments),
    }
    with tracer.start_as_current_span(
        f"execute_tool {name}", attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        if error:
            span.set_status(Status(StatusCode.ERROR, error))
        else:
            span.set_attribute(
                "gen_ai.tool.call.result", result if isinstance(result, str) else json.dumps(result)
            )


def weather_run(tracer: Tracer, city: str = "Paris", name: str = "weather") -> None:
    """One agent run: a model call asking for the weather tool, the tool, a model call answering."""
    question = message("user", text(f"Weather in {city}?"))
    asked = message("assistant", call(f"call-{city}", "get_weather", city=city))
    answered = message("tool", response(f"call-{city}", "get_weather", f"sunny in {city}"))
    with agent_span(tracer, name):
        chat(tracer, [question], [asked], system="Report the weather.")
        tool(tracer, f"call-{city}", "get_weather", {"city": city}, f"sunny in {city}")
        chat(
            tracer,
            [question, asked, answered],
            [message("assistant", text(f"It is sunny in {city}."))],
            system="Report the weather.",
        )


def require(module: str, reason: str) -> None:
    """Import ``module`` or skip with ``reason`` (a failure under ``CI=true``, where it must be there)."""
    try:
        __import__(module)
    except ImportError as err:
        message = f"{reason}: {err}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message, allow_module_level=True)
