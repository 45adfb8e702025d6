"""OpenInference spans made by hand: kinds set when spans end, content parts, sparse indices, documents."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.trace import TracerProvider

from agentevals.testing import RecordingEngine


def flattened(prefix: str, index: int, **fields: Any) -> dict[str, Any]:
    return {f"{prefix}.{index}.message.{key.replace('__', '.')}": value for key, value in fields.items()}


def test_a_chain_whose_kinds_are_set_at_the_end_with_a_retriever_and_content_parts(
    provider: TracerProvider, engine: RecordingEngine
) -> None:
    tracer = provider.get_tracer("openinference.instrumentation.some_framework")
    app = provider.get_tracer("my-app")
    with app.start_as_current_span("request"):
        with tracer.start_as_current_span(
            "rag"
        ) as chain:  # no attributes until it ends, as OpenInference does
            with tracer.start_as_current_span("retrieve") as retriever:
                retriever.set_attributes(
                    {
                        "openinference.span.kind": "RETRIEVER",
                        "retrieval.documents.0.document.content": "Paris is the capital of France.",
                        "retrieval.documents.1.document.content": "Lyon is in France.",
                    }
                )
            with tracer.start_as_current_span("llm") as llm:
                llm.set_attributes(
                    {
                        "openinference.span.kind": "LLM",
                        "llm.model_name": "gpt-test",
                        **flattened("llm.input_messages", 0, role="system", content="Use the context."),
                        **flattened(
                            "llm.input_messages",
                            1,
                            role="user",
                            contents__0__message_content__type="text",
                            contents__0__message_content__text="Capital ",
                            contents__1__message_content__type="text",
                            contents__1__message_content__text="of France?",
                        ),
                        **flattened("llm.output_messages", 0, role="assistant", content="Paris."),
                        "llm.token_count.prompt": 12,
                        "llm.token_count.completion": 2,
                        "llm.token_count.total": 14,
                    }
                )
            chain.set_attributes({"openinference.span.kind": "CHAIN", "input.value": "Capital of France?"})
        assert len(engine.runs) == 1  # scored when the chain ended, inside the open request
    (run,) = engine.runs
    assert run.entity == "rag"
    assert run.context == ["Paris is the capital of France.", "Lyon is in France."]
    assert [m.content for m in run.system_messages] == ["Use the context."]
    assert (run.input_text, run.output_text) == ("Capital of France?", "Paris.")
    assert run.metadata["usage"] == {"input_tokens": 12, "output_tokens": 2, "total_tokens": 14}
    assert run.metadata["models"] == ["gpt-test"]


def test_tool_calls_with_sparse_indices_and_their_tool_spans(
    provider: TracerProvider, engine: RecordingEngine
) -> None:
    tracer = provider.get_tracer("openinference.instrumentation.some_framework")
    with tracer.start_as_current_span("agent", attributes={"openinference.span.kind": "AGENT"}) as agent:
        agent.set_attribute("agent.name", "helper")
        with tracer.start_as_current_span("llm", attributes={"openinference.span.kind": "LLM"}) as llm:
            llm.set_attributes(
                {
                    **flattened("llm.input_messages", 0, role="user", content="Weather and time?"),
                    **flattened(
                        "llm.output_messages",
                        0,
                        role="assistant",
                        tool_calls__1__tool_call__id="c1",
                        tool_calls__1__tool_call__function__name="weather",
                        tool_calls__1__tool_call__function__arguments='{"city": "Paris"}',
                        tool_calls__3__tool_call__id="c2",
                        tool_calls__3__tool_call__function__name="clock",
                        tool_calls__3__tool_call__function__arguments="{}",
                    ),
                }
            )
        for name, args, result in (
            ("weather", '{"city": "Paris"}', "sunny"),
            ("clock", "{}", '{"time": "noon"}'),
        ):
            attributes = {"openinference.span.kind": "TOOL", "tool.name": name, "input.value": args}
            with tracer.start_as_current_span(name, attributes=attributes) as span:
                span.set_attribute("output.value", result)
    (run,) = engine.runs
    assert run.entity == "helper"
    calls = run.output_messages[0].tool_invocations
    assert [(c.tool_call_id, c.tool_name, c.args, c.result, c.state) for c in calls] == [
        ("c1", "weather", {"city": "Paris"}, "sunny", "result"),
        ("c2", "clock", {}, {"time": "noon"}, "result"),
    ]
