"""ScorerCallbackHandler on real create_agent agents, LCEL chains, a RAG chain and LangGraph streams."""

from __future__ import annotations

import asyncio
import gc
import logging
import uuid
import weakref
from typing import Any

import pytest
from agentevals_langchain import ScorerCallbackHandler
from agentevals_langchain.testing import ScriptedChatModel
from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from agentevals import FlushReport, ScoringEngine, create_scorer
from agentevals.engine import EngineStats, QueueOptions, ScoringOptions
from agentevals.sinks import MemorySink


def ask(city: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": city}]}


def test_two_tool_agent_run_has_messages_tools_usage_and_ids(weather_agent: Any, engine: Any) -> None:
    handler = ScorerCallbackHandler(engine=engine)
    root_id = uuid.uuid4()
    result = weather_agent.invoke(
        ask("Paris"),
        config={
            "callbacks": [handler],
            "run_id": root_id,
            "tags": ["prod"],
            "metadata": {"session": "s1", "ground_truth": "sunny"},
        },
    )
    assert result["messages"][-1].text == "It is sunny in Paris and 2+3=5."
    (run,) = engine.runs
    assert run.run_id == run.trace_id == str(root_id)
    assert run.entity == "LangGraph"
    assert [m.content for m in run.system_messages] == ["You are a weather assistant."]
    assert run.input_text == "Paris"
    assert run.output_text == "It is sunny in Paris and 2+3=5."
    calls = run.output_messages[0].tool_invocations
    assert [(c.tool_name, c.args, c.result, c.state) for c in calls] == [
        ("get_weather", {"city": "Paris"}, "sunny in Paris", "result"),
        ("add", {"a": 2, "b": 3}, "5", "result"),  # ToolMessage content is text
    ]
    assert all(c.duration_ms is not None and c.duration_ms >= 0 for c in calls)
    assert run.output_messages[0].reasoning == "I need the weather in Paris and a sum."
    assert run.ground_truth == "sunny"
    assert run.metadata["session"] == "s1" and run.metadata["tags"] == ["prod"]
    assert "ground_truth" not in run.metadata
    usage = run.metadata["usage"]
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"] > 0
    assert run.metadata["model_calls"] == 2 and run.metadata["tool_calls"] == 2
    assert run.error is None and run.duration_ms is not None and run.started_at is not None
    assert handler.open_runs == 0


def test_lcel_chain_input_system_prompt_and_text_output(engine: Any) -> None:
    prompt = ChatPromptTemplate.from_messages([("system", "Answer in one word."), ("human", "{question}")])
    model = GenericFakeChatModel(messages=iter([AIMessage(content="Paris")]))
    chain = prompt | model | StrOutputParser()
    handler = ScorerCallbackHandler(engine=engine, entity="capitals")
    assert chain.invoke({"question": "Capital of France?"}, config={"callbacks": [handler]}) == "Paris"
    (run,) = engine.runs
    assert run.entity == "capitals"
    assert run.input_text == "Capital of France?"
    assert [m.content for m in run.system_messages] == ["Answer in one word."]
    assert run.output_text == "Paris"
    assert run.request_context == {"inputs": {"question": "Capital of France?"}}


def test_lcel_chain_of_template_variables_takes_the_rendered_prompt_as_input(engine: Any) -> None:
    prompt = ChatPromptTemplate.from_messages([("system", "Be brief."), ("human", "Tell me about {topic}")])
    chain = prompt | ScriptedChatModel(respond=lambda messages: "Owls hunt at night.") | StrOutputParser()
    chain.invoke({"topic": "owls"}, config={"callbacks": [ScorerCallbackHandler(engine=engine)]})
    (run,) = engine.runs
    assert run.input_text == "Tell me about owls"  # not "owls": a judge needs the question the model saw
    assert [m.content for m in run.system_messages] == ["Be brief."]
    assert run.output_text == "Owls hunt at night."
    assert run.request_context == {"inputs": {"topic": "owls"}}


class TinyRetriever(BaseRetriever):
    docs: list[str]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return [Document(page_content=d) for d in self.docs if any(w in d for w in query.split())]


def test_rag_chain_captures_retrieved_documents_as_context(engine: Any) -> None:
    retriever = TinyRetriever(docs=["Paris is the capital of France.", "Berlin is in Germany."])
    prompt = ChatPromptTemplate.from_messages([("human", "Context: {context}\nQuestion: {question}")])
    model = ScriptedChatModel(respond=lambda messages: "Paris.")
    chain = (
        {
            "context": retriever | RunnableLambda(lambda docs: "\n".join(d.page_content for d in docs)),
            "question": RunnablePassthrough(),
        }
        | prompt
        | model
        | StrOutputParser()
    )
    chain.invoke("capital France", config={"callbacks": [ScorerCallbackHandler(engine=engine)]})
    (run,) = engine.runs
    assert run.context == ["Paris is the capital of France."]
    assert run.input_text == "capital France"
    assert run.output_text == "Paris."


def test_a_raising_agent_is_always_submitted_with_its_error(broken_agent: Any, engine: Any) -> None:
    handler = ScorerCallbackHandler(engine=engine)
    with pytest.raises(RuntimeError, match="backend down"):
        broken_agent.invoke(ask("x"), config={"callbacks": [handler]})
    (run,) = engine.runs
    assert run.error == "RuntimeError: backend down for x"
    (call,) = run.output_messages[0].tool_invocations
    assert call.tool_name == "broken_lookup" and call.state == "error"
    assert call.error == "RuntimeError: backend down for x" and call.failed
    assert handler.open_runs == 0


async def test_fifty_concurrent_ainvokes_share_one_handler_without_mixing(
    weather_agent: Any, engine: Any
) -> None:
    handler = ScorerCallbackHandler(engine=engine)
    cities = [f"city-{i}" for i in range(50)]
    await asyncio.gather(*[weather_agent.ainvoke(ask(c), config={"callbacks": [handler]}) for c in cities])
    assert len(engine.runs) == 50
    assert len({r.run_id for r in engine.runs}) == 50
    for run in engine.runs:
        city = run.input_text
        assert run.output_text == f"It is sunny in {city} and 2+3=5."
        args = [c.args for c in run.output_messages[0].tool_invocations]
        assert args == [{"city": city}, {"a": 2, "b": 3}]
    assert sorted(r.input_text for r in engine.runs) == sorted(cities)
    assert handler.open_runs == 0
    assert not handler._owner  # the ids of every child run (chains, models, tools) were released too


def test_sync_stream_and_threads_from_parallel_tools(weather_agent: Any, engine: Any) -> None:
    handler = ScorerCallbackHandler(engine=engine)
    chunks = list(weather_agent.stream(ask("Oslo"), config={"callbacks": [handler]}, stream_mode="updates"))
    assert chunks
    (run,) = engine.runs
    assert run.output_text == "It is sunny in Oslo and 2+3=5."
    assert [c.state for c in run.output_messages[0].tool_invocations] == ["result", "result"]


async def test_astream_messages_mode(weather_agent: Any, engine: Any) -> None:
    handler = ScorerCallbackHandler(engine=engine)
    async for _ in weather_agent.astream(
        ask("Rome"), config={"callbacks": [handler]}, stream_mode="messages"
    ):
        pass
    (run,) = engine.runs
    assert run.input_text == "Rome" and run.output_text == "It is sunny in Rome and 2+3=5."


def test_bare_chat_model_call_is_its_own_root(engine: Any) -> None:
    model = ScriptedChatModel(respond=lambda messages: "pong")
    model.invoke(
        [("system", "Be terse."), ("human", "ping")],
        config={"callbacks": [ScorerCallbackHandler(engine=engine)]},
    )
    (run,) = engine.runs
    assert run.input_text == "ping" and run.output_text == "pong"
    assert [m.content for m in run.system_messages] == ["Be terse."]


def test_agent_inside_an_outer_runnable_is_one_run(weather_agent: Any, engine: Any) -> None:
    outer = RunnableLambda(lambda city: weather_agent.invoke(ask(city)))
    outer.invoke("Lima", config={"callbacks": [ScorerCallbackHandler(engine=engine)]})
    (run,) = engine.runs
    assert run.input_text == "Lima"
    assert run.output_text == "It is sunny in Lima and 2+3=5."


def test_handler_never_raises_into_the_chain(
    weather_agent: Any,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    engine: Any,
    exploding_engine: Any,
) -> None:
    handler = ScorerCallbackHandler(engine=exploding_engine)
    with caplog.at_level(logging.ERROR, logger="agentevals"):
        result = weather_agent.invoke(ask("Quito"), config={"callbacks": [handler]})
    assert result["messages"][-1].text.startswith("It is sunny in Quito")
    assert "could not submit run" in caplog.text

    import agentevals_langchain._recorder as recorder_module

    def broken_build(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("capture bug")

    monkeypatch.setattr(recorder_module, "build_run", broken_build)
    handler = ScorerCallbackHandler(engine=engine)
    result = weather_agent.invoke(ask("Quito"), config={"callbacks": [handler]})
    assert result["messages"][-1].text.startswith("It is sunny in Quito")
    assert engine.runs == [] and handler.open_runs == 0


def test_abandoned_runs_are_bounded(engine: Any) -> None:
    handler = ScorerCallbackHandler(engine=engine, max_open_runs=3)
    for _ in range(5):  # chain starts that never end (e.g. abandoned streams)
        handler.on_chain_start(None, {"input": "x"}, run_id=uuid.uuid4(), name="chain")
    assert handler.open_runs == 3 and handler.dropped_open_runs == 2


def test_constructor_validates_its_arguments(engine: Any) -> None:
    scorer = create_scorer(id="one").generate_score(lambda **_: 1.0)
    with pytest.raises(ValueError, match="either engine= or scorers="):
        ScorerCallbackHandler(engine=engine, scorers=[scorer])
    with pytest.raises(ValueError, match="needs scorers="):
        ScorerCallbackHandler()


def test_end_to_end_with_the_real_engine_and_sampling(weather_agent: Any) -> None:
    mentions_city = create_scorer(id="mentions_city").generate_score(
        lambda run, **_: 1.0 if run.input_text in run.output_text else 0.0
    )
    used_tools = create_scorer(id="used_tools").generate_score(
        lambda run, **_: float(len(run.output_messages[0].tool_invocations))
    )
    memory = MemorySink()
    handler = ScorerCallbackHandler(
        scorers={"mentions_city": mentions_city, "used_tools": {"scorer": used_tools, "sampling": 0.0}},
        sinks=[memory],
    )
    assert isinstance(handler.engine, ScoringEngine)
    assert handler.submit_lazy.__self__ is handler.engine  # type: ignore[attr-defined]  # no wrapper per run
    ids = [uuid.uuid4() for _ in range(4)]
    for i, run_id in enumerate(ids):
        weather_agent.invoke(ask(f"c{i}"), config={"callbacks": [handler], "run_id": run_id})
    assert handler.flush(10)
    handler.shutdown(10)
    assert sorted(r.trace_id for r in memory.records) == sorted(str(i) for i in ids)
    assert {r.scorer_id for r in memory.records} == {"mentions_city"}
    assert all(r.score == 1.0 and r.source == "live" for r in memory.records)


def test_a_chat_loop_reusing_its_lists_is_scored_as_the_run_saw_them(weather_agent: Any) -> None:
    memory = MemorySink()
    counts = create_scorer(id="turns").generate_score(lambda run: float(len(run.remembered_messages)))
    # The run is built after the appends.
    engine = ScoringEngine([counts], sinks=[memory], queue=QueueOptions(linger=0.5))
    handler = ScorerCallbackHandler(engine=engine)
    history: list[Any] = [{"role": "user", "content": "Paris"}]
    result = weather_agent.invoke({"messages": history}, config={"callbacks": [handler]})
    history.append({"role": "user", "content": "and Rome?"})
    result["messages"].append(AIMessage(content="added later"))
    assert engine.shutdown(timeout=10)
    [record] = memory.records
    assert record.score == 0.0
    assert [m.content for m in record.input.input_messages] == ["Paris"]
    assert record.output[-1].content == "It is sunny in Paris and 2+3=5."


def test_a_final_state_of_agentevals_messages_gets_the_langchain_system_prompt() -> None:
    from datetime import UTC, datetime

    from agentevals_langchain._recorder import Trace, build_run
    from langchain_core.messages import HumanMessage, SystemMessage

    from agentevals import Message

    trace = Trace(
        root_id=uuid.uuid4(),
        kind="chain",
        name="graph",
        inputs={"messages": [Message(role="user", content="hi")]},
        tags=(),
        metadata={},
        started_at=datetime.now(UTC),
        t0=0.0,
    )
    trace.model_started(1, "fake", [SystemMessage("Be brief."), HumanMessage("hi")])
    final = {"messages": [Message(role="user", content="hi"), Message(role="assistant", content="hello")]}
    finished = trace.seal(final, error=None, entity=None, ended=1.0)
    run = finished()
    assert [m.content for m in run.system_messages] == ["Be brief."]
    assert (run.input_text, run.output_text) == ("hi", "hello")
    assert build_run(finished) == run


class DeferringEngine:
    """An engine that keeps each submitted run unbuilt, as ScoringEngine does until it is sampled."""

    def __init__(self) -> None:
        self.builds: list[Any] = []

    def submit(self, run: Any) -> bool:
        raise AssertionError("the handler submits unbuilt runs to an engine that takes them")

    def submit_lazy(self, build: Any, *, run_id: str, trace_id: str | None = None) -> bool:
        self.builds.append(build)
        return True

    def flush(self, timeout: float = 30.0) -> FlushReport:
        return FlushReport(completed=True)

    async def aflush(self, timeout: float = 30.0) -> FlushReport:
        return FlushReport(completed=True)

    def shutdown(self, timeout: float = 30.0) -> FlushReport:
        return FlushReport(completed=True)

    def stats(self) -> EngineStats:
        return EngineStats()


def test_a_run_waiting_to_be_scored_does_not_keep_the_agents_messages_alive(weather_agent: Any) -> None:
    engine = DeferringEngine()
    handler = ScorerCallbackHandler(engine=engine)
    result = weather_agent.invoke(ask("Paris"), config={"callbacks": [handler]})
    alive = [weakref.ref(m) for m in result["messages"]]
    assert len(alive) == 5  # user, tool calls, two tool results, answer
    del result
    gc.collect()
    assert [ref() for ref in alive] == [None] * 5
    (build,) = engine.builds
    run = build()  # what was kept still makes the whole run
    assert [m.content for m in run.system_messages] == ["You are a weather assistant."]
    assert (run.input_text, run.output_text) == ("Paris", "It is sunny in Paris and 2+3=5.")
    calls = run.output_messages[0].tool_invocations
    assert [(c.tool_name, c.result, c.state) for c in calls] == [
        ("get_weather", "sunny in Paris", "result"),
        ("add", "5", "result"),
    ]
    assert run.output_messages[0].reasoning == "I need the weather in Paris and a sum."


def test_a_capture_bug_is_logged_and_the_agent_and_its_run_go_on(
    weather_agent: Any, engine: Any, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentevals_langchain._recorder import Trace

    def broken(*args: Any) -> None:
        raise ValueError("capture bug")

    monkeypatch.setattr(Trace, "tool_started", broken)
    handler = ScorerCallbackHandler(engine=engine)
    with caplog.at_level(logging.ERROR, logger="agentevals"):
        result = weather_agent.invoke(ask("Lima"), config={"callbacks": [handler]})
    assert result["messages"][-1].text == "It is sunny in Lima and 2+3=5."
    failures = [r for r in caplog.records if "capture failed in on_tool_start" in r.getMessage()]
    assert len(failures) == 2 and all(r.exc_info is not None for r in failures)
    (run,) = engine.runs  # scored without what the failed steps would have added (tool durations)
    assert run.output_text == "It is sunny in Lima and 2+3=5."
    assert run.metadata["tool_calls"] == 0
    assert [c.duration_ms for c in run.output_messages[0].tool_invocations] == [None, None]


def test_a_streamed_chat_model_and_chain_are_scored(engine: Any) -> None:
    model = GenericFakeChatModel(
        messages=iter([AIMessage(content="hello there"), AIMessage(content="hi again")])
    )
    handler = ScorerCallbackHandler(engine=engine)
    streamed = "".join(str(chunk.content) for chunk in model.stream("hi", config={"callbacks": [handler]}))
    chain = ChatPromptTemplate.from_messages([("user", "{q}")]) | model | StrOutputParser()
    streamed_chain = "".join(chain.stream({"q": "hey"}, config={"callbacks": [handler]}))
    assert (streamed, streamed_chain) == ("hello there", "hi again")
    direct, through_chain = engine.runs  # the chunks LangChain hands over become assistant messages
    assert (direct.input_text, direct.output_text) == ("hi", "hello there")
    assert (through_chain.input_text, through_chain.output_text) == ("hey", "hi again")


def test_failed_runs_are_skipped_by_default_and_scored_with_score_errors(broken_agent: Any) -> None:
    from agentevals.results import ScoreSkipped
    from agentevals.sinks import MemorySink

    failing = create_scorer(id="failing").generate_score(lambda run, **_: float(run.error is not None))
    for score_errors, outcome in ((None, "skipped"), (True, "scored")):
        memory = MemorySink()
        handler = ScorerCallbackHandler(scorers=[failing], sinks=[memory], score_errors=score_errors)
        with pytest.raises(RuntimeError):
            broken_agent.invoke(ask("x"), config={"callbacks": [handler]})
        assert handler.shutdown()
        (record,) = memory.records
        assert record.outcome == outcome and record.run_id
        if outcome == "skipped":
            assert isinstance(record, ScoreSkipped) and record.skip_reason == "run_failed"
            assert "backend down" in record.reason
        else:
            assert record.score == 1.0


def test_score_errors_with_a_ready_engine_says_to_set_it_on_the_entries(engine: Any) -> None:
    with pytest.raises(ValueError, match=r"ScorerEntry\(score_errors=True\)"):
        ScorerCallbackHandler(engine=engine, score_errors=True)


def _echo_scorer() -> Any:
    """Scores 1 and gives the question back as its reason, so redaction shows in the record."""
    return (
        create_scorer(id="echo")
        .generate_score(lambda run, **_: 1.0)
        .generate_reason(lambda run, **_: f"asked: {run.input_text}")
    )


@pytest.mark.parametrize("way", ["options on the handler", "a ready engine="])
def test_engine_options_reach_the_engine_either_way(weather_agent: Any, way: str) -> None:
    from agentevals.redaction import EMAIL, mask

    memory = MemorySink()
    if way == "a ready engine=":
        handler = ScorerCallbackHandler(
            engine=ScoringEngine(
                [_echo_scorer()],
                sinks=[memory],
                redact=mask([EMAIL]),
                scoring=ScoringOptions(max_concurrency=2),
            )
        )
    else:
        handler = ScorerCallbackHandler(
            scorers=[_echo_scorer()],
            sinks=[memory],
            redact=mask([EMAIL]),
            scoring=ScoringOptions(max_concurrency=2),
        )
    assert isinstance(handler.engine, ScoringEngine) and handler.engine.scoring.max_concurrency == 2
    weather_agent.invoke(ask("mail ann@example.com"), config={"callbacks": [handler]})
    assert handler.flush(10)
    handler.shutdown(10)
    (record,) = memory.records
    assert record.reason == "asked: mail <redacted>"


def test_engine_options_that_cannot_apply_are_refused_with_the_fix(engine: Any) -> None:
    with pytest.raises(TypeError, match=r"unknown option brokr=.*broker=.*engine="):
        ScorerCallbackHandler(scorers=[_echo_scorer()], brokr="redis://127.0.0.1:6379/0")
    with pytest.raises(ValueError, match=r"either engine= or .*redact="):
        ScorerCallbackHandler(engine=engine, redact=lambda record: record)
