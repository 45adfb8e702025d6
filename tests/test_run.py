from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentevals import AgentInput, Message, Run, ToolInvocation


def test_plain_strings_give_text_views() -> None:
    run = Run(input="What is 2+2?", output="4", ground_truth="4")
    assert run.input_text == "What is 2+2?"
    assert run.output_text == "4"
    assert [m.role for m in run.input_messages] == ["user"]
    assert [m.content for m in run.output_messages] == ["4"]
    assert run.run_id  # a fresh id is generated


def test_run_ids_are_unique_and_given_ids_are_kept() -> None:
    assert Run(output="a").run_id != Run(output="a").run_id
    assert Run(output="a", run_id="r1").run_id == "r1"
    assert Run.from_mastra(output="a", runId=42).run_id == "42"


def test_message_lists_become_agent_input_and_messages() -> None:
    run = Run(
        input=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        output=[{"role": "assistant", "content": "Hello"}],
    )
    assert isinstance(run.input, AgentInput)
    assert [m.content for m in run.system_messages] == ["Be brief."]
    assert [m.content for m in run.input_messages] == ["Hi"]
    assert isinstance(run.output[0], Message)
    assert run.output_text == "Hello"


def test_agent_input_accepts_strings_and_from_mastra_camel_case() -> None:
    agent_input = Run.from_mastra(
        input={
            "inputMessages": ["Hello"],
            "systemMessages": "You are helpful.",
            "taggedSystemMessages": {"memory": ["User likes tea."]},
        },
        output="",
    ).agent_input
    assert agent_input.input_messages[0].role == "user"
    assert agent_input.system_messages[0].content == "You are helpful."
    assert agent_input.tagged_system_messages["memory"][0].role == "system"


def test_mastra_stored_message_shape_is_flattened() -> None:
    [message] = Run.from_mastra(
        output=[
            {
                "id": "m1",
                "role": "assistant",
                "content": {
                    "format": 2,
                    "parts": [
                        {
                            "type": "reasoning",
                            "reasoning": "",
                            "details": [{"type": "text", "text": "think"}],
                        },
                        {
                            "type": "tool-invocation",
                            "toolInvocation": {
                                "state": "result",
                                "toolCallId": "c1",
                                "toolName": "weather",
                                "args": {"city": "Paris"},
                                "result": {"temp": 20},
                            },
                        },
                        {"type": "text", "text": "It is 20 degrees."},
                    ],
                },
            }
        ]
    ).output
    assert message.content == "It is 20 degrees."
    assert message.reasoning == "think"
    assert message.tool_invocations == [
        ToolInvocation(tool_call_id="c1", tool_name="weather", args={"city": "Paris"}, result={"temp": 20})
    ]


def test_from_mastra_reads_a_stored_message_list() -> None:
    stored = [
        {
            "id": "u1",
            "role": "user",
            "createdAt": "2025-06-01T10:00:00.000Z",
            "threadId": "thread-1",
            "resourceId": "user-42",
            "type": "text",
            "content": {"format": 2, "parts": [{"type": "text", "text": "Weather in Paris?"}]},
        },
        {
            "id": "a1",
            "role": "assistant",
            "createdAt": "2025-06-01T10:00:01.000Z",
            "threadId": "thread-1",
            "resourceId": "user-42",
            "type": "text",
            "content": {
                "format": 2,
                "parts": [{"type": "step-start"}, {"type": "text", "text": "Sunny."}],
                "content": "Sunny.",
                "toolInvocations": [
                    {
                        "state": "result",
                        "toolCallId": "c1",
                        "toolName": "weather",
                        "args": {"cityName": "Paris"},
                        "result": {"tempC": 21},
                    }
                ],
                "metadata": {"model": "gpt-4o"},
            },
        },
    ]
    run = Run.from_mastra(
        {
            "runId": "r1",
            "input": {"inputMessages": stored[:1], "rememberedMessages": [], "systemMessages": []},
            "output": stored[1:],
            "groundTruth": "Sunny",
            "requestContext": {"userTier": "pro"},
        }
    )
    assert (run.run_id, run.ground_truth, run.request_context) == ("r1", "Sunny", {"userTier": "pro"})
    assert run.input_text == "Weather in Paris?" and run.output_text == "Sunny."
    [question], [answer] = run.input_messages, run.output_messages
    assert question.metadata == {
        "created_at": "2025-06-01T10:00:00.000Z",
        "thread_id": "thread-1",
        "resource_id": "user-42",
        "type": "text",
    }
    assert answer.metadata["model"] == "gpt-4o"
    # the user's data keeps its keys; only Mastra's field names become snake_case
    assert answer.tool_invocations == [
        ToolInvocation(
            tool_call_id="c1", tool_name="weather", args={"cityName": "Paris"}, result={"tempC": 21}
        )
    ]


def test_from_mastra_reads_camel_case_trajectories() -> None:
    run = Run.from_mastra(
        input="q",
        output={"steps": [{"name": "get", "stepType": "tool_call", "toolArgs": {"userId": 1}}]},
        expectedTrajectory={"steps": [{"name": "get"}], "maxSteps": 2},
    )
    assert run.output == {"steps": [{"name": "get", "step_type": "tool_call", "tool_args": {"userId": 1}}]}
    assert run.expected_trajectory == {"steps": [{"name": "get"}], "max_steps": 2}


def test_models_take_snake_case_only_and_point_to_from_mastra() -> None:
    with pytest.raises(ValidationError, match=r"Run\.from_mastra"):
        Run(output="x", groundTruth="y")
    with pytest.raises(ValidationError, match=r"Run\.from_mastra"):
        Message.model_validate({"role": "user", "content": {"format": 2, "parts": []}})
    with pytest.raises(ValidationError):
        ToolInvocation.model_validate({"toolName": "search"})
    with pytest.raises(ValidationError):
        AgentInput.model_validate({"inputMessages": ["Hi"]})


def test_openai_content_parts_are_joined() -> None:
    message = Message.model_validate(
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url"}, "b"]}
    )
    assert message.content == "ab"


def test_unknown_fields_are_rejected_with_the_known_ones_listed() -> None:
    with pytest.raises(ValidationError, match="unknown Run field"):
        Run(output="x", groundtruth="typo")


def test_none_content_is_a_clear_error() -> None:
    with pytest.raises(ValidationError, match="content"):
        Message(role="user", content=None)  # type: ignore[arg-type]


def test_run_is_immutable() -> None:
    run = Run(output="x")
    with pytest.raises(ValidationError):
        run.output = "y"  # type: ignore[misc]


def test_failed_tool_invocation_detection() -> None:
    assert ToolInvocation(tool_name="t", state="error").failed
    assert ToolInvocation(tool_name="t", result={"error": "boom"}).failed
    assert not ToolInvocation(tool_name="t", result={"ok": True}).failed


def test_from_messages_splits_at_the_last_user_message() -> None:
    run = Run.from_messages(
        [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "answer 1"},
            {"role": "user", "content": "second"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"q": 1}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"hits": 3}'},
            {"role": "assistant", "content": "3 hits"},
        ],
        ground_truth="3",
    )
    assert [m.content for m in run.system_messages] == ["sys"]
    assert [m.content for m in run.remembered_messages] == ["first", "answer 1"]
    assert [m.content for m in run.input_messages] == ["second"]
    assert [m.content for m in run.output_messages] == ["", "3 hits"]
    invocation = run.output_messages[0].tool_invocations[0]
    assert (invocation.tool_name, invocation.args, invocation.result, invocation.state) == (
        "lookup",
        {"q": 1},
        {"hits": 3},
        "result",
    )
    assert run.ground_truth == "3"


@pytest.mark.parametrize("text", ["hello", ""])
def test_from_messages_rejects_a_bare_string(text: str) -> None:
    with pytest.raises(TypeError, match=r"list of messages.*Run\(input=\.\.\., output=\.\.\.\)"):
        Run.from_messages(text)


def test_message_converters_reject_a_bare_string() -> None:
    from agentevals._model._convert import messages_from_openai, to_messages

    with pytest.raises(TypeError, match="list of messages"):
        to_messages("hello")
    with pytest.raises(TypeError, match="list of messages"):
        messages_from_openai("hello")  # type: ignore[arg-type]
