"""FakeJudgeServer as the agent's model: a real ChatOpenAI agent and LiteLLM offline, tool calls and SSE."""

from __future__ import annotations

import os
from typing import Any

import openai
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from agentevals.testing import ChatRequest, FakeJudgeServer, Reply, ToolCall, schema_responder

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch when LiteLLM loads


def weather_agent(server: FakeJudgeServer, calls: list[str], **model_options: Any) -> Any:
    @tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        calls.append(city)
        return {"paris": "sunny, 21°C", "oslo": "light snow, -3°C"}.get(city.lower(), "unknown")

    model = ChatOpenAI(
        model=server.agent_model, base_url=server.url, api_key="fake-key", max_retries=0, **model_options
    )
    return create_agent(model, tools=[get_weather], system_prompt="You report the weather.")


def ask(city: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": f"Weather in {city}"}]}


def test_a_chat_openai_agent_calls_the_scripted_tool_and_answers() -> None:
    calls: list[str] = []
    script = [Reply.tool_call("get_weather", city="Paris"), "It is sunny, 21°C."]
    with FakeJudgeServer(agent_script=script) as server:
        result = weather_agent(server, calls).invoke(ask("Paris"))
    assert calls == ["Paris"]
    assert result["messages"][-1].text == "It is sunny, 21°C."
    tool_message = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert tool_message.content == "sunny, 21°C"
    first, second = server.requests
    assert [t["function"]["name"] for t in first.body["tools"]] == ["get_weather"]
    assert second.tool_results == ["sunny, 21°C"]  # the tool's result went back to the model


def test_a_streaming_agent_gets_tool_call_deltas_text_tokens_and_usage() -> None:
    calls: list[str] = []
    script = [Reply.tool_call("get_weather", {"city": "Oslo"}), "It is light snow, -3°C."]
    with FakeJudgeServer(agent_script=script) as server:
        agent = weather_agent(server, calls, streaming=True, stream_usage=True)
        chunks = [c for c, _ in agent.stream(ask("Oslo"), stream_mode="messages")]
    assert calls == ["Oslo"]
    model_chunks = [c for c in chunks if isinstance(c, AIMessageChunk)]
    call_chunks = [tc for c in model_chunks for tc in c.tool_call_chunks]
    assert call_chunks[0]["name"] == "get_weather"
    assert len(call_chunks) > 2  # the arguments arrive in pieces and the client joins them
    tokens = [c.text for c in model_chunks if c.text]
    assert len(tokens) > 1 and "".join(tokens) == "It is light snow, -3°C."
    usage = [c.usage_metadata for c in model_chunks if c.usage_metadata]
    assert usage and usage[-1]["total_tokens"] == 20
    assert all(r.body["stream"] is True for r in server.requests)


def test_an_agent_responder_answers_from_the_request_s_messages() -> None:
    def model(request: ChatRequest) -> Reply:
        if not request.tool_results:
            return Reply.tool_call("get_weather", city=request.prompt.split()[-1])
        return Reply.text(f"It is {request.tool_results[-1]}.")

    calls: list[str] = []
    with FakeJudgeServer(agent_responder=model) as server:
        agent = weather_agent(server, calls)
        answers = [agent.invoke(ask(city))["messages"][-1].text for city in ("Paris", "Oslo")]
    assert calls == ["Paris", "Oslo"]
    assert answers == ["It is sunny, 21°C.", "It is light snow, -3°C."]


def test_several_tool_calls_in_one_turn() -> None:
    calls: list[str] = []
    both = Reply(
        content=None,
        tool_calls=(ToolCall("get_weather", {"city": "Paris"}), ToolCall("get_weather", {"city": "Oslo"})),
    )
    for streaming in (False, True):
        with FakeJudgeServer(agent_script=[both, "Sunny in Paris, snow in Oslo."]) as server:
            result = weather_agent(server, calls, streaming=streaming).invoke(ask("Paris and Oslo"))
        assert result["messages"][-1].text == "Sunny in Paris, snow in Oslo."
        asked = next(m for m in result["messages"] if isinstance(m, AIMessage) and m.tool_calls)
        assert [c["args"] for c in asked.tool_calls] == [{"city": "Paris"}, {"city": "Oslo"}]
    assert sorted(calls) == ["Oslo", "Oslo", "Paris", "Paris"]  # the agent runs the two tools concurrently


def test_litellm_reads_the_streamed_reply_and_its_usage() -> None:
    import litellm

    with FakeJudgeServer(agent_script=["Hello there, friend.", Reply.tool_call("lookup", q="x y")]) as server:
        settings: dict[str, Any] = {"model": f"openai/{server.agent_model}", "api_base": server.url}
        settings |= {"api_key": "fake-key", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        text_chunks = list(litellm.completion(**settings, stream_options={"include_usage": True}))
        call_chunks = list(litellm.completion(**settings))
    pieces = [c.choices[0].delta.content for c in text_chunks if c.choices and c.choices[0].delta.content]
    assert len(pieces) > 1 and "".join(pieces) == "Hello there, friend."
    usage = [c.usage for c in text_chunks if getattr(c, "usage", None)]
    assert usage and usage[-1].total_tokens == 20
    arguments = "".join(
        tc.function.arguments or ""
        for c in call_chunks
        if c.choices and c.choices[0].delta.tool_calls
        for tc in c.choices[0].delta.tool_calls
    )
    assert arguments == '{"q": "x y"}'
    assert server.requests[0].body["stream_options"] == {"include_usage": True}


def test_agent_and_judge_requests_never_take_each_other_s_replies() -> None:
    from agentevals.scorers.llm import create_answer_relevancy_scorer

    calls: list[str] = []
    script = [Reply.tool_call("get_weather", city="Paris"), "It is sunny, 21°C."]
    with FakeJudgeServer(agent_script=script, responder=schema_responder(positive_rate=1.0)) as server:
        scorer = create_answer_relevancy_scorer(server.judge())
        agent = weather_agent(server, calls)
        first = scorer.run_sync(input="Weather in Paris?", output="It is sunny.")  # judge first, then agent
        answer = agent.invoke(ask("Paris"))["messages"][-1].text
    assert first.score == 1.0 and answer == "It is sunny, 21°C." and calls == ["Paris"]
    models = [r.model for r in server.requests]
    assert models == [server.model] * 3 + [server.agent_model] * 2


def test_a_missing_agent_reply_or_a_failing_responder_is_a_clear_500() -> None:
    calls: list[str] = []
    no_agent_reply = pytest.raises(openai.InternalServerError, match="no scripted agent reply")
    with FakeJudgeServer(["a judge reply"]) as server, no_agent_reply:
        weather_agent(server, calls).invoke(ask("Paris"))

    def broken(request: ChatRequest) -> Reply:
        raise KeyError("city")

    raised = pytest.raises(openai.InternalServerError, match="agent_responder raised KeyError")
    with FakeJudgeServer(agent_responder=broken) as server, raised:
        weather_agent(server, calls).invoke(ask("Paris"))
    assert calls == []


def test_bad_configuration_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="agent_model"):
        FakeJudgeServer(model="same", agent_model="same")
    with pytest.raises(ValueError, match="JSON-serialisable"):
        ToolCall("search", {"when": object()})
    with pytest.raises(ValueError, match="name of the tool"):
        Reply.tool_call("")
