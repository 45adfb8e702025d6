"""@scored: live scoring for plain sync and async functions."""

from __future__ import annotations

from typing import Any

import pytest

from agentevals import Run, create_scorer, scored
from agentevals.sinks import MemorySink
from agentevals.testing import RecordingEngine


def test_sync_text_function() -> None:
    engine = RecordingEngine()

    @scored(engine=engine)
    def answer(prompt: str, temperature: float = 0.0) -> str:
        return prompt.upper()

    assert answer("hello", temperature=0.5) == "HELLO"
    (run,) = engine.runs
    assert (run.input_text, run.output_text) == ("hello", "HELLO")
    assert run.entity.endswith("answer") and run.duration_ms is not None and run.started_at is not None
    assert answer.engine is engine  # type: ignore[attr-defined]


async def test_async_messages_function() -> None:
    engine = RecordingEngine()

    @scored(engine=engine, entity="chat")
    async def chat(messages: list[dict[str, str]]) -> str:
        return f"you said {messages[-1]['content']}"

    history = [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "bye"},
    ]
    assert await chat(history) == "you said bye"
    (run,) = engine.runs
    assert run.entity == "chat"
    assert run.input_text == "bye" and run.output_text == "you said bye"
    assert [m.content for m in run.system_messages] == ["Be kind."]
    assert [m.content for m in run.remembered_messages] == ["hi", "hello"]


def test_function_returning_the_whole_conversation_and_langchain_messages() -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    engine = RecordingEngine()

    @scored(engine=engine, input_arg="convo")
    def respond(user_id: str, convo: list[Any]) -> list[Any]:
        return [*convo, AIMessage(content="done")]

    respond("u1", [HumanMessage(content="do it")])
    (run,) = engine.runs
    assert (run.input_text, run.output_text) == ("do it", "done")


def test_errors_reraise_and_their_runs_are_submitted_with_the_error() -> None:
    engine = RecordingEngine()

    @scored(engine=engine)
    def fails(prompt: str) -> str:
        raise ValueError("nope")

    with pytest.raises(ValueError, match="nope"):
        fails("x")
    (run,) = engine.runs
    assert run.error == "ValueError: nope" and run.input_text == "x" and run.output is None


def test_a_failed_call_is_scored_where_asked_and_skipped_elsewhere() -> None:
    from agentevals import create_scorer
    from agentevals.sinks import MemorySink

    memory = MemorySink()
    failed = create_scorer(id="failed").generate_score(lambda run, **_: float(run.error is not None))
    other = create_scorer(id="other").generate_score(lambda run, **_: 1.0)

    @scored(scorers={"failed": {"scorer": failed, "score_errors": True}, "other": other}, sinks=[memory])
    def fails(prompt: str) -> str:
        raise ValueError("nope")

    with pytest.raises(ValueError):
        fails("x")
    assert fails.engine.flush()  # type: ignore[attr-defined]
    outcomes = {r.scorer_id: (r.outcome, r.score) for r in memory.records}
    assert outcomes == {"failed": ("scored", 1.0), "other": ("skipped", None)}


def test_capture_never_raises_into_the_call() -> None:
    class Exploding(RecordingEngine):
        def submit(self, run: Run) -> bool:
            raise RuntimeError("engine exploded")

    @scored(engine=Exploding())
    def f(prompt: str) -> str:
        return "ok"

    assert f("x") == "ok"


def test_configuration_errors() -> None:
    scorer = create_scorer(id="one").generate_score(lambda **_: 1.0)
    with pytest.raises(ValueError, match="either engine= or scorers="):
        scored(engine=RecordingEngine(), scorers=[scorer])
    with pytest.raises(ValueError, match="needs scorers="):
        scored()
    with pytest.raises(ValueError, match="no such parameter"):

        @scored(engine=RecordingEngine(), input_arg="question")
        def f(prompt: str) -> str:
            return prompt

    with pytest.raises(TypeError, match="generator"):

        @scored(engine=RecordingEngine())
        def g(prompt: str) -> Any:
            yield prompt


def test_end_to_end_with_sampling() -> None:
    memory = MemorySink()
    echo = create_scorer(id="echo").generate_score(lambda run, **_: float(run.output_text == run.input_text))
    never = create_scorer(id="never").generate_score(lambda **_: 0.0)

    @scored(scorers={"echo": echo, "never": {"scorer": never, "sampling": 0.0}}, sinks=[memory])
    def same(prompt: str) -> str:
        return prompt

    for i in range(5):
        same(f"p{i}")
    engine = same.engine  # type: ignore[attr-defined]
    assert engine.flush(10)
    engine.shutdown(10)
    assert sorted(r.input for r in memory.records) == [f"p{i}" for i in range(5)]
    assert {r.scorer_id for r in memory.records} == {"echo"} and all(r.score == 1.0 for r in memory.records)


def test_default_sampling_applies_to_every_scorer() -> None:
    memory = MemorySink()
    echo = create_scorer(id="echo").generate_score(lambda **_: 1.0)

    @scored(scorers=[echo], sinks=[memory], sampling=0.0)
    def f(prompt: str) -> str:
        return prompt

    f("x")
    f.engine.flush(10)  # type: ignore[attr-defined]
    f.engine.shutdown(10)  # type: ignore[attr-defined]
    assert memory.records == []
    assert f.engine.stats().sampled_out == 1  # type: ignore[attr-defined]
