"""Multi-turn items: the target is driven turn by turn, the scorers see the whole conversation."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agentevals_langchain.testing import ScriptedChatModel
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage

from agentevals import Run, create_scorer
from agentevals.evals import arun_evals
from agentevals.live import EvalItem
from agentevals.scorers import create_multi_turn_judge_scorer
from agentevals.testing import FakeJudgeServer

TURNS = ["My name is Ada.", "I live in Paris.", "What do you know about me?"]


def remembering(messages: list[BaseMessage]) -> str:
    """Replies from the whole conversation: what the user said so far, so a lost turn shows."""
    said = [str(m.content) for m in messages if isinstance(m, HumanMessage)]
    return f"Turn {len(said)}: you said " + " / ".join(said)


def transcript_of(server: FakeJudgeServer) -> str:
    assert len(server.requests) == 1
    return server.requests[0].prompt


def test_items_take_the_reference_inputs_shape_and_turns() -> None:
    item = EvalItem.of({"inputs": TURNS, "groundTruth": "Ada"}, index=0)
    assert item.turns == tuple(TURNS) and item.input == TURNS
    assert EvalItem.of({"turns": [{"role": "user", "content": "Hi"}]}, index=0).turns == (
        {"role": "user", "content": "Hi"},
    )
    assert EvalItem.of({"input": "Hi"}, index=0).turns is None
    with pytest.raises(ValueError, match="non-empty array"):
        EvalItem.of({"inputs": []}, index=0)
    with pytest.raises(ValueError, match="non-empty array"):
        EvalItem.of({"turns": "Hi"}, index=0)
    with pytest.raises(ValueError, match="give one of"):
        EvalItem.of({"input": "Hi", "inputs": ["Hi"]}, index=0)
    with pytest.raises(ValueError, match="user message"):
        EvalItem.of({"inputs": [{"role": "assistant", "content": "Hi"}]}, index=0)


async def test_a_langchain_agent_is_driven_turn_by_turn(judge_server: FakeJudgeServer) -> None:
    judge_server.push({"satisfied": True, "reasoning": "It remembers."})
    agent = create_agent(ScriptedChatModel(respond=remembering), tools=[])
    judge = create_multi_turn_judge_scorer(judge_server.judge(), criterion="Remembers the user")
    result = await arun_evals([{"inputs": TURNS}], [judge], agent, progress=False)

    item = result.items[0]
    assert item.error is None and result.scores == {"multi_turn_judge": 1.0}
    run = item.run
    assert [m.content for m in run.remembered_messages] == [
        TURNS[0],
        "Turn 1: you said My name is Ada.",
        TURNS[1],
        "Turn 2: you said My name is Ada. / I live in Paris.",
    ]
    assert run.input_text == TURNS[2]
    assert run.output_text == "Turn 3: you said " + " / ".join(TURNS)  # the agent saw every turn
    assert run.metadata["turns"] == 3 and run.metadata["turns_completed"] == 3
    assert len(item.target_result) == 3  # each turn's raw result

    prompt = transcript_of(judge_server)
    for turn in TURNS:
        assert f"user: {turn}" in prompt
    assert "assistant: Turn 1: you said My name is Ada." in prompt
    assert "assistant: Turn 3: you said" in prompt


async def test_a_plain_callable_gets_the_conversation_so_far(judge_server: FakeJudgeServer) -> None:
    judge_server.push({"satisfied": False, "reasoning": "Forgets."})
    seen: list[list[dict[str, Any]]] = []

    def bot(messages: list[dict[str, Any]], request_context: dict[str, Any]) -> str:
        seen.append(list(messages))
        return f"{request_context['persona']} heard {len(messages)} message(s)"

    judge = create_multi_turn_judge_scorer(judge_server.judge(), criterion="Remembers the user")
    data = [{"turns": TURNS, "request_context": {"persona": "Bot"}}]
    result = await arun_evals(data, [judge], bot, progress=False)

    assert [len(messages) for messages in seen] == [1, 3, 5]
    assert seen[2] == [
        {"role": "user", "content": TURNS[0]},
        {"role": "assistant", "content": "Bot heard 1 message(s)"},
        {"role": "user", "content": TURNS[1]},
        {"role": "assistant", "content": "Bot heard 3 message(s)"},
        {"role": "user", "content": TURNS[2]},
    ]
    assert result.scores == {"multi_turn_judge": 0.0}
    body = json.dumps(judge_server.requests[0].messages)
    assert all(turn in body for turn in TURNS) and "Bot heard 5 message(s)" in body


async def test_an_async_callable_may_return_the_whole_conversation() -> None:
    async def bot(messages: list[Any]) -> dict[str, Any]:
        return {"messages": [*messages, {"role": "assistant", "content": f"#{len(messages)}"}]}

    said = create_scorer(id="said").generate_score(lambda run, **_: float(run.output_text == "#5"))
    result = await arun_evals([{"inputs": TURNS}], [said], bot, progress=False)
    assert result.scores == {"said": 1.0}
    assert len(result.items[0].run.remembered_messages) == 4


async def test_a_failing_turn_ends_the_item_with_the_turns_done() -> None:
    def bot(messages: list[dict[str, Any]]) -> str:
        if len(messages) > 1:
            raise ValueError("lost the thread")
        return "Hello Ada"

    seen: list[Run] = []

    def score(run: Run, **_: Any) -> float:
        seen.append(run)
        return 1.0

    result = await arun_evals(
        [{"inputs": TURNS}], [create_scorer(id="any").generate_score(score)], bot, progress=False
    )
    item = result.items[0]
    assert item.error == "turn 2 of 3: ValueError: lost the thread"
    assert not item.passed and seen == []  # a target error is not scored
    record = item.results["any"]
    assert record.failed_step == "target" and record.error_type == "ValueError"
    assert [m.content for m in item.run.remembered_messages] == [TURNS[0], "Hello Ada"]
    assert item.run.input_text == TURNS[1] and item.run.output == []
    assert item.run.metadata["turns_completed"] == 1
    assert item.target_result == ["Hello Ada"]


async def test_a_plain_runnable_gets_the_message_list() -> None:
    model = ScriptedChatModel(respond=lambda messages: f"{len(messages)} message(s)")
    said = create_scorer(id="said").generate_score(lambda run, **_: float(run.output_text == "5 message(s)"))
    result = await arun_evals([{"inputs": TURNS}], [said], model, progress=False)
    assert result.scores == {"said": 1.0}
    assert [m.content for m in result.items[0].run.remembered_messages][1::2] == [
        "1 message(s)",
        "3 message(s)",
    ]
