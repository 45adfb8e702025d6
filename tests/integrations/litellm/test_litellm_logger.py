"""ScoringLogger with LiteLLM mock responses, and a real judge call (FakeJudgeServer) left unscored."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm
from agentevals_litellm import ScoringLogger

from agentevals import PromptStep, create_scorer
from agentevals.sinks import MemorySink
from agentevals.testing import FakeJudgeServer, RecordingEngine

litellm.suppress_debug_info = True
MODEL = "openai/gpt-4o-mini"


@pytest.fixture
def register() -> Iterator[Callable[[ScoringLogger], ScoringLogger]]:
    """Register a logger globally for one test, then unregister it from every LiteLLM callback list."""
    added: list[ScoringLogger] = []

    def add(logger: ScoringLogger) -> ScoringLogger:
        added.append(logger)
        return logger.register()

    yield add
    for logger in added:
        logger.unregister()


def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    """LiteLLM logs sync calls on its own thread: wait (bounded) for the event to arrive."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


async def await_for(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Async LiteLLM calls log in a task on the caller's loop: yield to it while waiting."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.01)
    return predicate()


def test_sync_completion_with_tool_calls(register: Any) -> None:
    engine = RecordingEngine()
    register(ScoringLogger(engine=engine))
    litellm.completion(
        model=MODEL,
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
        ],
        mock_response="",
        mock_tool_calls=[
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
        metadata={"ground_truth": "sunny", "session": "s1"},
    )
    assert wait_for(lambda: len(engine.runs) == 1)
    (run,) = engine.runs
    assert run.input_text == "Weather in Paris?"
    assert [m.content for m in run.system_messages] == ["Be brief."]
    (call,) = run.output_messages[0].tool_invocations
    assert (call.tool_call_id, call.tool_name, call.args, call.state) == (
        "call_1",
        "get_weather",
        {"city": "Paris"},
        "call",
    )
    assert run.ground_truth == "sunny" and run.metadata["session"] == "s1"
    assert run.metadata["usage"] == {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}
    assert run.metadata["model"] == "gpt-4o-mini" and run.entity == "gpt-4o-mini"
    assert run.run_id and run.duration_ms is not None


async def test_async_completion_and_skip_flag(register: Any) -> None:
    engine = RecordingEngine()
    logger = register(ScoringLogger(engine=engine, entity="support-bot"))
    await litellm.acompletion(
        model=MODEL, messages=[{"role": "user", "content": "hi"}], mock_response="hello there"
    )
    await litellm.acompletion(
        model=MODEL,
        messages=[{"role": "user", "content": "internal"}],
        mock_response="x",
        metadata={"agentevals_skip": True},
    )
    assert await await_for(lambda: len(engine.runs) >= 1 and logger.skipped >= 1)
    (run,) = engine.runs
    assert (run.input_text, run.output_text, run.entity) == ("hi", "hello there", "support-bot")


async def test_failed_calls_are_always_submitted(register: Any) -> None:
    engine = RecordingEngine()
    register(ScoringLogger(engine=engine))
    with pytest.raises(litellm.RateLimitError):
        await litellm.acompletion(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], mock_response="litellm.RateLimitError"
        )
    assert await await_for(lambda: len(engine.runs) == 1)
    assert "RateLimitError" in (engine.runs[0].error or "")


async def test_judge_calls_are_never_scored(register: Any) -> None:
    """A logger whose own scorer calls an LLM judge through LiteLLM must not score that judge call."""
    memory = MemorySink()
    with FakeJudgeServer([{"score": 0.7}]) as server:
        judged = create_scorer(id="judged", judge=server.judge()).generate_score(
            PromptStep(description="rate", create_prompt=lambda run: f"Rate: {run.output_text}")
        )
        logger = register(ScoringLogger(scorers=[judged], sinks=[memory]))
        await litellm.acompletion(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], mock_response="hello"
        )
        assert await await_for(lambda: logger.engine.stats().submitted >= 1)
        assert await logger.aflush(10)
        assert len(server.requests) == 1  # the judge really went through LiteLLM's HTTP path
    logger.shutdown(10)
    (record,) = memory.records
    assert record.score == 0.7 and record.scorer_id == "judged"
    assert await await_for(lambda: logger.skipped >= 1)  # the judge call reached the logger, left out
    assert logger.engine.stats().submitted == 1


async def test_streamed_calls_are_scored_once_with_the_whole_reply(register: Any) -> None:
    engine = RecordingEngine()
    register(ScoringLogger(engine=engine))
    stream = await litellm.acompletion(
        model=MODEL, messages=[{"role": "user", "content": "hi"}], mock_response="streamed reply", stream=True
    )
    async for _ in stream:
        pass
    assert await await_for(lambda: len(engine.runs) == 1)
    (run,) = engine.runs
    assert run.output_text == "streamed reply" and run.metadata["stream"] is True


def test_unregister_lets_a_new_logger_take_over(register: Callable[[ScoringLogger], ScoringLogger]) -> None:
    """LiteLLM keeps its own copies of the callbacks and refuses a second logger of one class: after
    unregister(), a new ScoringLogger receives the calls and the old one none."""
    first = ScoringLogger(engine=RecordingEngine()).register()
    litellm.completion(model=MODEL, messages=[{"role": "user", "content": "a"}], mock_response="1")
    assert wait_for(lambda: len(first.engine.runs) == 1)  # type: ignore[attr-defined]
    first.unregister()
    second = register(ScoringLogger(engine=RecordingEngine()))
    litellm.completion(model=MODEL, messages=[{"role": "user", "content": "b"}], mock_response="2")
    assert wait_for(lambda: len(second.engine.runs) == 1)  # type: ignore[attr-defined]
    time.sleep(0.2)
    assert len(first.engine.runs) == 1  # type: ignore[attr-defined]
