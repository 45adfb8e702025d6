"""Target adapters: LangChain runnables, chat inputs, request context, failing nodes; the progress bar."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from agentevals import Run, arun_evals, create_scorer
from agentevals._evals import _progress
from agentevals.results import ScoreFailure
from agentevals.scorers import create_exact_match_scorer


async def test_a_plain_runnable_gets_the_raw_input_and_its_message_output_is_converted() -> None:
    chain: RunnableLambda[str, AIMessage] = RunnableLambda(lambda text: AIMessage(content=text.upper()))
    result = await arun_evals(
        [{"input": "hi", "ground_truth": "HI"}], [create_exact_match_scorer()], chain, progress=False
    )
    assert result.scores == {"exact_match": 1.0}
    assert result.items[0].output[0].role == "assistant"


async def test_runnables_receive_request_context_as_configurable_and_the_run_id() -> None:
    seen: list[dict[str, Any]] = []

    def echo(text: str, config: RunnableConfig) -> str:
        seen.append({"configurable": config.get("configurable", {}), "run_id": config.get("run_id")})
        return text

    result = await arun_evals(
        [{"input": "x", "request_context": {"thread_id": "t-1", "tier": "pro"}}],
        [create_exact_match_scorer().with_id("em")],
        RunnableLambda(echo),
        progress=False,
    )
    assert seen[0]["configurable"]["tier"] == "pro" and seen[0]["configurable"]["thread_id"] == "t-1"
    assert result.items[0].results["em"].request_context == {"thread_id": "t-1", "tier": "pro"}


async def test_chat_agents_accept_message_lists_and_agent_inputs(chat_model: Callable[..., Any]) -> None:
    agent = create_agent(chat_model({"And in French?": "Bonjour"}), tools=[])
    said_hello = create_scorer(id="bonjour").generate_score(
        lambda run, **_: float("Bonjour" in run.output_text)
    )
    data: list[dict[str, Any]] = [
        {
            "input": [
                {"role": "user", "content": "Say hello"},
                {"role": "assistant", "content": "Hello"},
                {"role": "user", "content": "And in French?"},
            ]
        },
        {"input": {"input_messages": ["And in French?"], "system_messages": ["Be polite."]}},
    ]
    result = await arun_evals(data, [said_hello], agent, progress=False)
    assert result.scores == {"bonjour": 1.0}
    run: Run = result.items[0].run
    assert run.input_text == "And in French?"
    assert [m.content for m in run.remembered_messages] == ["Say hello", "Hello"]


class State(TypedDict, total=False):
    text: str
    checked: str


def _graph(fail_on: str) -> Any:
    def check(state: State) -> State:
        if state["text"] == fail_on:
            raise ValueError("cannot check this")
        return {"checked": state["text"].upper()}

    graph = StateGraph(State)
    graph.add_node("check", check)
    graph.add_edge(START, "check")
    graph.add_edge("check", END)
    return graph.compile()


async def test_a_failing_node_fails_its_item_and_its_step_scorers() -> None:
    node_ok = create_scorer(id="node-ok").generate_score(lambda run, **_: float(bool(run.output["checked"])))
    result = await arun_evals(
        [{"input": {"text": "fine"}}, {"input": {"text": "bad"}}],
        {"steps": {"check": [node_ok], "never-ran": [node_ok]}},
        _graph(fail_on="bad"),
        progress=False,
    )
    assert result.items[0].passed and result.items[0].scores == {"check/node-ok": 1.0}
    bad = result.items[1]
    assert bad.error == "ValueError: cannot check this"
    failure = bad.results["check/node-ok"]
    assert isinstance(failure, ScoreFailure) and failure.failed_step == "target"
    assert result.scores == {
        "workflow": {},
        "steps": {"check": {"node-ok": 1.0}, "never-ran": {"node-ok": None}},
    }
    assert any("'never-ran' never ran" in w for w in result.summary.warnings)


async def test_progress_bar_is_off_without_a_tty_and_shown_with_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = [{"input": "a", "ground_truth": "A"}] * 3
    await arun_evals(data, [create_exact_match_scorer()], str.upper, progress=True)
    assert capsys.readouterr().err == ""  # stderr is captured, not a terminal
    monkeypatch.setattr(_progress, "_stderr_is_tty", lambda: True)
    await arun_evals(data, [create_exact_match_scorer()], str.upper, progress=True)
    err = capsys.readouterr().err
    assert "evaluating" in err and "3/3" in err
    await arun_evals(data, [create_exact_match_scorer()], str.upper, progress=False)
    assert capsys.readouterr().err == ""


async def test_step_scorers_on_a_create_agent_graph_see_chat_messages(chat_model: Callable[..., Any]) -> None:
    from langchain_core.tools import tool

    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    model = chat_model(
        {"Weather in Paris?": "It is sunny."},
        tool_calls={"Weather in Paris?": {"name": "weather", "args": {"city": "Paris"}, "id": "c1"}},
    )
    seen: dict[str, Run] = {}

    def capture(name: str) -> Any:
        def score(run: Run, **_: Any) -> float:
            seen[name] = run
            return 1.0

        return create_scorer(id=name).generate_score(score)

    result = await arun_evals(
        [{"input": "Weather in Paris?"}],
        {"workflow": [capture("whole")], "steps": {"model": [capture("model")], "tools": [capture("tools")]}},
        create_agent(model, tools=[weather]),
        progress=False,
    )
    assert result.summary.errored_runs == 0, result.items[0].failures
    model_run = seen["model"]  # the last model call: the final answer
    assert model_run.input_text == "Weather in Paris?"
    assert model_run.output_text.startswith("It is sunny.")
    tools_run = seen["tools"]  # create_agent's tools node gets the tool calls, returns tool messages
    assert [(c["name"], c["args"]) for c in tools_run.input] == [("weather", {"city": "Paris"})]
    assert [(m.role, m.content) for m in tools_run.output] == [("tool", "sunny in Paris")]
    assert seen["whole"].output[0].tool_invocations[0].result == "sunny in Paris"


class ChatState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    tone: str


async def test_a_chat_graph_gets_its_own_state_when_the_input_is_one() -> None:

    class ChatState(TypedDict):
        messages: Annotated[list[AnyMessage], add_messages]
        tone: str

    def reply(state: ChatState) -> dict[str, Any]:
        return {"messages": [AIMessage(content=f"({state['tone']}) {state['messages'][-1].content}")]}

    graph = StateGraph(ChatState)
    graph.add_node("reply", reply)
    graph.add_edge(START, "reply")
    graph.add_edge("reply", END)
    data: list[dict[str, Any]] = [
        {
            "input": {"messages": [{"role": "user", "content": "hi"}], "tone": "warm"},
            "ground_truth": "(warm) hi",
        },
        {"input": "hello", "ground_truth": "(None) hello"},  # a plain string becomes the messages
    ]
    result = await arun_evals(data, [create_exact_match_scorer()], graph.compile(), progress=False)
    assert result.items[0].scores == {"exact_match": 1.0}
    assert result.items[1].error is not None and "tone" in result.items[1].error  # the graph needs a tone


async def test_trajectory_scorers_get_the_items_expected_trajectory(chat_model: Callable[..., Any]) -> None:
    from langchain_core.tools import tool

    from agentevals.scorers import create_trajectory_accuracy_scorer_code

    @tool
    def search(query: str) -> str:
        """Search."""
        return "found"

    model = chat_model(
        {"Find cats": "Cats found.", "Say hi": "Hi."},
        tool_calls={"Find cats": {"name": "search", "args": {"query": "cats"}, "id": "c1"}},
    )
    result = await arun_evals(
        [
            {"input": "Find cats", "expectedTrajectory": ["search"]},
            {"input": "Say hi", "expected_trajectory": ["search"]},
        ],
        {"trajectory": [create_trajectory_accuracy_scorer_code()]},
        create_agent(model, tools=[search]),
        progress=False,
    )
    scores = [i.scores for i in result.items]
    assert [next(iter(s.values())) for s in scores] == [1.0, 0.0]
    assert isinstance(result.scores, dict) and "workflow" not in result.scores  # flat, as for agents
