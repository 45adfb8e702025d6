"""Python twins of the seed's Scorer Utils examples."""

from __future__ import annotations

import pytest

from agentevals import AgentInput, Message, create_scorer
from agentevals.scorers.utils import (
    create_agent_test_run,
    create_test_message,
    create_tool_invocation,
    extract_agent_response_messages,
    extract_input_messages,
    extract_tool_calls,
    extract_tool_results,
    get_assistant_message_from_run_output,
    get_combined_system_prompt,
    get_reasoning_from_run_output,
    get_system_messages_from_run_input,
    get_user_message_from_run_input,
    round_to_two_decimals,
)


def weather_run() -> object:
    return create_agent_test_run(
        input_messages=[create_test_message("What is the weather?", role="user")],
        system_messages=["You are a weather bot.", ""],
        tagged_system_messages={"memory": ["User lives in London."]},
        output=[
            create_test_message(
                "Let me check.",
                role="assistant",
                tool_invocations=[
                    create_tool_invocation(
                        tool_call_id="call-1",
                        tool_name="weatherTool",
                        args={"location": "London"},
                        result={"temp": 20},
                    ),
                    create_tool_invocation(tool_call_id="", tool_name="clock", state="call"),
                    create_tool_invocation(tool_call_id="p", tool_name="partial", state="partial-call"),
                ],
            ),
            Message(role="assistant", content="It is 20 degrees.", reasoning="Tool said 20."),
        ],
    )


def test_message_extraction() -> None:
    run = weather_run()
    assert get_user_message_from_run_input(run.input) == "What is the weather?"  # type: ignore[attr-defined]
    assert get_assistant_message_from_run_output(run.output) == "Let me check."  # type: ignore[attr-defined]
    assert extract_input_messages(run.input) == ["What is the weather?"]  # type: ignore[attr-defined]
    assert extract_agent_response_messages(run.output) == ["Let me check.", "It is 20 degrees."]  # type: ignore[attr-defined]
    assert get_reasoning_from_run_output(run.output) == "Tool said 20."  # type: ignore[attr-defined]
    assert get_user_message_from_run_input(AgentInput()) is None
    assert get_assistant_message_from_run_output([]) is None
    assert get_user_message_from_run_input("plain question") == "plain question"
    assert get_assistant_message_from_run_output("plain answer") == "plain answer"


def test_system_prompts() -> None:
    run = weather_run()
    assert get_system_messages_from_run_input(run.input) == [
        "You are a weather bot.",
        "User lives in London.",
    ]  # type: ignore[attr-defined]
    assert get_combined_system_prompt(run.input) == "You are a weather bot.\n\nUser lives in London."  # type: ignore[attr-defined]


def test_extract_tool_calls_and_results() -> None:
    run = weather_run()
    tools, infos = extract_tool_calls(run.output)  # type: ignore[attr-defined]
    assert tools == ["weatherTool", "clock"]
    assert [(i.tool_call_id, i.message_index, i.invocation_index) for i in infos] == [
        ("call-1", 0, 0),
        ("0-1", 0, 1),
    ]
    [result] = extract_tool_results(run.output)  # type: ignore[attr-defined]
    assert (result.tool_name, result.args, result.result) == (
        "weatherTool",
        {"location": "London"},
        {"temp": 20},
    )


def test_seed_tool_usage_scorer() -> None:
    scorer = (
        create_scorer(id="tool-usage", description="Evaluates tool usage patterns", type="agent")
        .preprocess(
            lambda run, **_: {
                "tools_used": extract_tool_calls(run.output).tools,
                "tool_count": len(extract_tool_calls(run.output).tools),
            }
        )
        .generate_score(lambda results, **_: 1 if results.preprocess_step_result["tool_count"] > 0 else 0)
    )
    assert scorer.run_sync(weather_run()).score == 1.0  # type: ignore[arg-type]
    no_tools = create_agent_test_run(
        input_messages=["hi"], output=[create_test_message("hello", role="assistant")]
    )
    assert scorer.run_sync(no_tools).score == 0.0


def test_seed_reasoning_quality_scorer() -> None:
    scorer = (
        create_scorer(
            id="reasoning-quality", name="Reasoning Quality", description="Evaluates reasoning", type="agent"
        )
        .preprocess(
            lambda run, **_: {
                "reasoning": get_reasoning_from_run_output(run.output),
                "response": get_assistant_message_from_run_output(run.output),
            }
        )
        .analyze(
            lambda results, **_: {
                "has_reasoning": bool(results.preprocess_step_result["reasoning"]),
                "reasoning_length": len(results.preprocess_step_result["reasoning"] or ""),
                "has_step_by_step": "step" in (results.preprocess_step_result["reasoning"] or ""),
            }
        )
        .generate_score(
            lambda results, **_: (
                0
                if not results.analyze_step_result["has_reasoning"]
                else min(results.analyze_step_result["reasoning_length"] / 500, 1)
            )
        )
        .generate_reason(
            lambda results, score, **_: (
                "No reasoning was provided by the model."
                if not results.analyze_step_result["has_reasoning"]
                else f"Model provided {results.analyze_step_result['reasoning_length']} characters "
                f"of reasoning. Score: {score}"
            )
        )
    )
    result = scorer.run_sync(weather_run())  # type: ignore[arg-type]
    assert result.score == len("Tool said 20.") / 500
    assert result.reason == "Model provided 13 characters of reasoning. Score: 0.026"
    plain = create_agent_test_run(input_messages=["q"], output=[create_test_message("a", role="assistant")])
    assert scorer.run_sync(plain).reason == "No reasoning was provided by the model."


def test_seed_comprehensive_example() -> None:
    def preprocess(run: object) -> dict[str, object]:
        tools, _ = extract_tool_calls(run.output)  # type: ignore[attr-defined]
        return {
            "user_message": get_user_message_from_run_input(run.input),  # type: ignore[attr-defined]
            "response": get_assistant_message_from_run_output(run.output),  # type: ignore[attr-defined]
            "reasoning": get_reasoning_from_run_output(run.output),  # type: ignore[attr-defined]
            "system_prompt": get_combined_system_prompt(run.input),  # type: ignore[attr-defined]
            "tool_count": len(tools),
        }

    def score(results: object) -> float:
        r = results.preprocess_step_result  # type: ignore[attr-defined]
        return (
            (0.4 if r["response"] else 0) + (0.3 if r["reasoning"] else 0) + (0.3 if r["tool_count"] else 0)
        )

    def reason(results: object, score: float) -> str:
        r = results.preprocess_step_result  # type: ignore[attr-defined]
        parts = [
            p
            for p, ok in [
                ("provided a response", r["response"]),
                ("included reasoning", r["reasoning"]),
                (f"used {r['tool_count']} tool(s)", r["tool_count"]),
            ]
            if ok
        ]
        return f"Score: {score}. The agent {', '.join(parts)}."

    scorer = (
        create_scorer(
            id="comprehensive-analysis",
            name="Comprehensive Analysis",
            description="All aspects",
            type="agent",
        )
        .preprocess(preprocess)
        .generate_score(score)
        .generate_reason(reason)
    )
    result = scorer.run_sync(weather_run())  # type: ignore[arg-type]
    assert result.score == 1.0
    assert result.reason == "Score: 1.0. The agent provided a response, included reasoning, used 2 tool(s)."


def test_seed_test_utilities() -> None:
    user = create_test_message("What is the weather?", role="user")
    assistant = create_test_message(
        "The weather is sunny.",
        role="assistant",
        tool_invocations=[
            {
                "tool_call_id": "call-1",
                "tool_name": "weatherTool",
                "args": {"location": "London"},
                "result": {"temp": 20},
                "state": "result",
            }
        ],
    )
    assert (user.role, user.id) == ("user", "test-message")
    assert assistant.tool_invocations[0].tool_name == "weatherTool"
    test_run = create_agent_test_run(
        input_messages=[create_test_message("Hello", role="user")],
        output=[create_test_message("Hi there!", role="assistant")],
    )
    assert test_run.input_text == "Hello" and test_run.output_text == "Hi there!"
    assert test_run.run_id and test_run.request_context == {}


def test_round_to_two_decimals_rounds_half_up() -> None:
    assert round_to_two_decimals(0.835) == 0.84
    assert round_to_two_decimals((1.0 + 2 / 3) / 2) == 0.83
    assert round_to_two_decimals(0.125) == 0.13
    assert round_to_two_decimals(-0.125) == -0.13
    assert round_to_two_decimals(1.0) == 1.0


def test_create_agent_test_run_reads_a_string_as_one_message() -> None:
    run = create_agent_test_run(input_messages="What is 2+2?", system_messages="Be brief.")
    assert [m.content for m in run.input_messages] == ["What is 2+2?"]
    assert [m.content for m in run.system_messages] == ["Be brief."]


def test_create_agent_test_run_rejects_a_string_output() -> None:
    with pytest.raises(TypeError, match="list of messages"):
        create_agent_test_run(output="4")  # type: ignore[arg-type]
