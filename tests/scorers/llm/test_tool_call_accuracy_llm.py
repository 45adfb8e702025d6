"""Tool call accuracy (LLM) against scripted judge replies, with twins of the seed's examples."""

from __future__ import annotations

from typing import Any

import pytest
from item_counts import asks_again_for, item_bounds
from langchain_core.tools import tool
from prompt_blocks import unfenced

from agentevals import ScorerError
from agentevals.scorers.llm import create_tool_call_accuracy_scorer_llm
from agentevals.scorers.utils import create_agent_test_run, create_test_message, create_tool_invocation
from agentevals.testing import FakeJudgeServer, Reply

TOOLS = [
    {"name": "weather-tool", "description": "Get current weather information for any location"},
    {"name": "calendar-tool", "description": "Check calendar events and scheduling"},
    {"name": "search-tool", "description": "Search the web for general information"},
]


def agent_run(request: str, text: str, *calls: tuple[str, dict[str, Any]]) -> Any:
    return create_agent_test_run(
        input_messages=[create_test_message(request, role="user", id="input-1")],
        output=[
            create_test_message(
                text,
                role="assistant",
                id="output-1",
                tool_invocations=[
                    create_tool_invocation(
                        tool_call_id=f"call-{i}", tool_name=name, args=args, result={"ok": True}
                    )
                    for i, (name, args) in enumerate(calls)
                ],
            )
        ],
    )


def analysis(*appropriate: bool, missing: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "evaluations": [
            {"tool_called": f"t{i}", "was_appropriate": a, "reasoning": "r"}
            for i, a in enumerate(appropriate)
        ],
        "missing_tools": list(missing),
    }


@pytest.mark.parametrize(
    ("appropriate", "missing", "expected"),
    [
        ((True, True), (), 1.0),
        ((False, False), (), 0.0),
        ((True, False, True), (), 0.67),
        ((True,), ("weather-tool",), 0.5),  # a missing tool counts against the score
        ((), (), 1.0),  # nothing needed (e.g. clarification)
        ((), ("weather-tool",), 0.0),
    ],
)
async def test_formula(
    judge_server: FakeJudgeServer, appropriate: tuple[bool, ...], missing: tuple[str, ...], expected: float
) -> None:
    calls = [("search-tool", {"q": str(i)}) for i in range(len(appropriate))]
    judge_server.push(analysis(*appropriate, missing=missing), "reason")
    scorer = create_tool_call_accuracy_scorer_llm(judge_server.judge(), available_tools=TOOLS)
    result = await scorer.run(agent_run("Weather?", "Checking.", *calls))
    assert result.score == expected and result.reason == "reason"


async def test_fields_prompts_and_options(judge_server: FakeJudgeServer) -> None:
    judge_server.push(analysis(True, missing=("calendar-tool",)), "One sentence.")
    scorer = create_tool_call_accuracy_scorer_llm(
        judge_server.judge(), {"available_tools": TOOLS, "penalize_missing_tools": False}, scale=10
    )
    result = await scorer.run(
        agent_run("Weather in Paris?", "Sunny.", ("weather-tool", {"location": "Paris"}))
    )
    assert result.raw_score == 10.0
    pre = result.preprocess_step_result
    assert pre["actual_tools"] == ["weather-tool"] and pre["has_tool_calls"] is True
    assert pre["tool_call_infos"][0].tool_call_id == "call-0"
    prompt = result.analyze_prompt or ""
    assert '1. weather-tool({"location": "Paris"})' in prompt
    assert "- calendar-tool: Check calendar events and scheduling" in prompt and "Weather in Paris?" in prompt
    assert "ONE sentence" in (result.generate_reason_prompt or "")
    assert [s.type for s in scorer.steps] == ["function", "prompt", "function", "prompt"]


def test_available_tools_as_langchain_tools_and_objects() -> None:
    @tool
    def lookup(city: str) -> str:
        """Look up a city."""
        return city

    class Mine:
        id = "my-tool"
        description = "Does things"

    scorer = create_tool_call_accuracy_scorer_llm("openai/gpt-4o-mini", available_tools=[lookup, Mine()])
    assert scorer.name == "Tool Call Accuracy (LLM)"
    with pytest.raises(ValueError, match="needs available_tools"):
        create_tool_call_accuracy_scorer_llm("openai/gpt-4o-mini")
    with pytest.raises(ValueError, match="each available tool needs a name"):
        create_tool_call_accuracy_scorer_llm("openai/gpt-4o-mini", available_tools=[{"description": "x"}])


async def test_errors_and_retry(judge_server: FakeJudgeServer) -> None:
    scorer = create_tool_call_accuracy_scorer_llm(judge_server.judge(), available_tools=TOOLS)
    with pytest.raises(ScorerError, match="needs the user's request"):
        await scorer.run(input="", output="x")
    judge_server.push(analysis(True), analysis(True, False), "r")
    two = await scorer.run(agent_run("Weather?", "x", ("weather-tool", {}), ("weather-tool", {"c": 1})))
    assert two.score == 0.5 and two.judge_calls[0].attempts == 2
    asked, retry = judge_server.requests[-3:-1]
    assert item_bounds(asked, "evaluations") == (2, 2)
    assert item_bounds(asked, "missing_tools") == (None, len(TOOLS))
    assert asks_again_for(retry, "evaluations", 2)
    judge_server.push(analysis(False, True), "r")  # extra evaluations are ignored
    extra = await scorer.run(agent_run("Weather?", "x", ("weather-tool", {})))
    assert extra.score == 0.0
    judge_server.push(Reply.malformed(), analysis(True), "r")
    result = await scorer.run(agent_run("Weather?", "x", ("weather-tool", {})))
    assert result.score == 1.0 and result.judge_calls[0].attempts == 2


async def test_seed_basic_evaluation(judge_server: FakeJudgeServer) -> None:
    scorer = create_tool_call_accuracy_scorer_llm(judge_server.judge(), available_tools=TOOLS)
    run = agent_run(
        "What is the weather like in San Francisco today?",
        "Let me check the current weather for you.",
        ("weather-tool", {"location": "San Francisco", "date": "today"}),
    )
    reason = (
        "The agent correctly used the weather-tool to address the user's request for weather information."
    )
    judge_server.push(analysis(True), reason)
    result = await scorer.run(run)
    assert result.score == 1.0 and result.reason == reason


async def test_seed_inappropriate_tool(judge_server: FakeJudgeServer) -> None:
    scorer = create_tool_call_accuracy_scorer_llm(judge_server.judge(), available_tools=TOOLS)
    run = agent_run(
        "What is the weather in Tokyo?",
        "Let me search for that information.",
        ("search-tool", {"query": "Tokyo weather"}),
    )
    reason = "The agent used search-tool when weather-tool would have been more appropriate."
    judge_server.push(analysis(True, missing=("weather-tool",)), reason)
    result = await scorer.run(run)
    assert result.score == 0.5 and result.reason == reason


async def test_seed_clarification_request(judge_server: FakeJudgeServer) -> None:
    scorer = create_tool_call_accuracy_scorer_llm(judge_server.judge(), available_tools=TOOLS)
    run = agent_run(
        "I need help with something",
        "I'd be happy to help! Could you please provide more details about what you need assistance with?",
    )
    reason = (
        "The agent appropriately asked for clarification rather than calling tools with insufficient "
        "information."
    )
    judge_server.push(analysis(), reason)
    result = await scorer.run(run)
    assert result.score == 1.0 and result.reason == reason
    assert result.preprocess_step_result["has_tool_calls"] is False
    assert "Tools called:\nNone" in unfenced(result.analyze_prompt)


async def test_seed_comparing_both_scorers(judge_server: FakeJudgeServer) -> None:
    """The seed's LLM half. Its 0.3 is illustrative: here search-tool is judged acceptable but
    weather-tool missing, so the score is partial (0.5), and lower than a direct weather-tool call."""
    scorer = create_tool_call_accuracy_scorer_llm(
        judge_server.judge(),
        available_tools=[
            {"name": "weather-tool", "description": "Get weather information"},
            {"name": "search-tool", "description": "Search the web"},
        ],
    )
    run = agent_run(
        "What is the weather?", "Let me find that information.", ("search-tool", {"query": "weather"})
    )
    judge_server.push(
        analysis(False, missing=("weather-tool",)), "search-tool is less appropriate than weather-tool."
    )
    result = await scorer.run(run)
    assert 0.0 <= result.score < 1.0 and result.reason is not None and "less appropriate" in result.reason
