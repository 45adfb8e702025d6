from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from agentevals import Run
from agentevals.messages import messages_from_langchain, messages_from_openai


def test_openai_tool_calls_and_results_are_folded_into_invocations() -> None:
    messages = messages_from_openai(
        [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "a",
                        "type": "function",
                        "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
                    },
                    {"id": "b", "type": "function", "function": {"name": "clock", "arguments": ""}},
                ],
            },
            {"role": "tool", "tool_call_id": "a", "content": "sunny"},
            {"role": "assistant", "content": "Sunny.", "reasoning_content": "The tool said sunny."},
        ]
    )
    assert [m.role for m in messages] == ["user", "assistant", "assistant"]
    first, second = messages[1].tool_invocations
    assert (first.tool_name, first.args, first.result, first.state) == (
        "weather",
        {"city": "Paris"},
        "sunny",
        "result",
    )
    assert (second.tool_name, second.args, second.state) == ("clock", {}, "call")
    assert messages[2].reasoning == "The tool said sunny."


def test_openai_unparseable_arguments_are_kept_raw() -> None:
    [message] = messages_from_openai(
        [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "x", "function": {"name": "f", "arguments": "{not json"}}],
            }
        ]
    )
    assert message.tool_invocations[0].args == {"_raw": "{not json"}


def test_langchain_messages_convert_with_tool_errors_and_reasoning() -> None:
    messages = messages_from_langchain(
        [
            SystemMessage("Be helpful."),
            HumanMessage("Divide 1 by 0"),
            AIMessage(
                "",
                tool_calls=[{"name": "divide", "args": {"a": 1, "b": 0}, "id": "c1", "type": "tool_call"}],
            ),
            ToolMessage("ZeroDivisionError", tool_call_id="c1", status="error"),
            AIMessage(
                content=[
                    {"type": "reasoning", "reasoning": "Division by zero is undefined."},
                    {"type": "text", "text": "It is undefined."},
                ]
            ),
        ]
    )
    assert [m.role for m in messages] == ["system", "user", "assistant", "assistant"]
    invocation = messages[2].tool_invocations[0]
    assert invocation.state == "error" and invocation.failed
    assert invocation.error == "ZeroDivisionError"
    assert messages[3].content == "It is undefined."
    assert messages[3].reasoning == "Division by zero is undefined."


def test_langchain_accepts_tuples_via_convert_to_messages() -> None:
    messages = messages_from_langchain([("user", "hi"), ("assistant", "hello")])
    assert [(m.role, m.content) for m in messages] == [("user", "hi"), ("assistant", "hello")]


def test_run_from_langchain_conversation() -> None:
    run = Run.from_messages([SystemMessage("sys"), HumanMessage("q"), AIMessage("a")], entity="bot")
    assert run.input_text == "q" and run.output_text == "a" and run.entity == "bot"


def test_langchain_streamed_chunks_and_chat_messages_get_their_roles() -> None:
    from langchain_core.messages import AIMessageChunk, ChatMessage, HumanMessageChunk, SystemMessageChunk

    messages = messages_from_langchain(
        [
            SystemMessageChunk(content="Be brief."),
            HumanMessageChunk(content="hi"),
            AIMessageChunk(content="hel") + AIMessageChunk(content="lo"),
            ChatMessage(role="assistant", content="again"),
        ]
    )
    assert [(m.role, m.content) for m in messages] == [
        ("system", "Be brief."),
        ("user", "hi"),
        ("assistant", "hello"),
        ("assistant", "again"),
    ]
