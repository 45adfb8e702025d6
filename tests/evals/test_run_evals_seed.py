"""Python twins of the seed's runEvals examples: a real create_agent agent, a callable, a LangGraph
workflow with step scorers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from agentevals import Run, create_scorer, run_evals
from agentevals.evals import EvalItem

ANSWERS = {
    "What is machine learning?": "Machine learning lets computers learn patterns from data.",
    "Explain neural networks": "Neural networks are layers of weighted connections.",
    "How does AI work?": "AI systems learn from data to make predictions.",
}


def _mentions_learn(run: Run, **_: Any) -> float:
    return 1.0 if "learn" in run.output_text else 0.0


my_scorer_1 = create_scorer(id="mentions-learn").generate_score(_mentions_learn)
my_scorer_2 = create_scorer(id="short").generate_score(lambda run, **_: float(len(run.output_text) < 55))


def test_seed_usage_example_with_a_create_agent_agent(chat_model: Callable[..., Any]) -> None:
    agent = create_agent(chat_model(ANSWERS), tools=[], system_prompt="Be brief.", name="my-agent")
    completed: list[tuple[Any, dict[str, Any]]] = []

    result = run_evals(
        target=agent,
        data=[
            {"input": "What is machine learning?"},
            {"input": "Explain neural networks"},
            {"input": "How does AI work?"},
        ],
        scorers=[my_scorer_1, my_scorer_2],
        concurrency=2,
        on_item_complete=lambda item, target_result, scorer_results: completed.append(
            (item.input, scorer_results)
        ),
        progress=False,
    )

    assert result.scores == {"mentions-learn": pytest.approx(2 / 3), "short": pytest.approx(2 / 3)}
    assert result.summary.total_items == 3
    assert sorted(i for i, _ in completed) == sorted(ANSWERS)
    by_input = dict(completed)
    assert by_input["Explain neural networks"]["mentions-learn"].score == 0.0
    assert by_input["What is machine learning?"]["short"].score == 0.0  # 57 characters
    first = result.items[0]
    assert first.run.input_text == "What is machine learning?"
    assert first.output[-1].content == ANSWERS["What is machine learning?"]
    assert first.results["short"].entity == "my-agent"
    assert first.results["short"].source == "eval"


def test_seed_agent_evaluation_example_with_tool_calls(chat_model: Callable[..., Any]) -> None:
    @tool
    def lookup(topic: str) -> str:
        """Look a topic up in the encyclopedia."""
        return f"encyclopedia entry on {topic}"

    model = chat_model(
        {
            "What is AI?": "AI is a field of computer science that creates intelligent machines.",
            "How does machine learning work?": "It uses statistics.",
        },
        tool_calls={"What is AI?": {"name": "lookup", "args": {"topic": "AI"}, "id": "call_1"}},
    )
    chat_agent = create_agent(model, tools=[lookup])
    # The seed's scorer reads `run.output[0].content`; the first output message of a tool-using agent
    # is the tool call, so this twin reads the last one.
    my_scorer = create_scorer(
        id="my-scorer", description="Check if Agent's response contains ground truth", type="agent"
    ).generate_score(lambda run, **_: 1.0 if run.ground_truth in run.output[-1].content else 0.0)

    result = run_evals(
        target=chat_agent,
        data=[
            {
                "input": "What is AI?",
                "groundTruth": "AI is a field of computer science that creates intelligent machines.",
            },
            {
                "input": "How does machine learning work?",
                "groundTruth": "Machine learning uses algorithms to learn patterns from data.",
            },
        ],
        scorers=[my_scorer],
        concurrency=3,
        progress=False,
    )

    assert result.scores == {"my-scorer": 0.5}
    ai_run = result.items[0].run
    assert [m.role for m in ai_run.output] == ["assistant", "assistant"]
    invocation = ai_run.output[0].tool_invocations[0]
    assert (invocation.tool_name, invocation.args) == ("lookup", {"topic": "AI"})
    assert invocation.result == "encyclopedia entry on AI"


def test_seed_agent_example_with_a_plain_callable() -> None:
    async def chat(question: str) -> str:
        return ANSWERS.get(question, "I don't know.")

    result = run_evals(
        target=chat,
        data=[{"input": q} for q in ANSWERS],
        scorers=[my_scorer_1, my_scorer_2],
        concurrency=2,
        progress=False,
    )
    assert result.scores == {"mentions-learn": pytest.approx(2 / 3), "short": pytest.approx(2 / 3)}
    assert result.summary.total_items == 3
    assert result.items[1].output == ANSWERS["Explain neural networks"]


class TaskState(TypedDict, total=False):
    query: str
    priority: str
    valid: bool
    result: str


def _workflow() -> Any:
    graph = StateGraph(TaskState)
    graph.add_node("validation-step", lambda s: {"valid": bool(s["query"].strip())})
    graph.add_node(
        "processing-step",
        lambda s: {"result": s["query"].upper() if s["priority"] == "high" else s["query"]},
    )
    graph.add_edge(START, "validation-step")
    graph.add_edge("validation-step", "processing-step")
    graph.add_edge("processing-step", END)
    return graph.compile(name="my-workflow")


output_quality_scorer = create_scorer(id="output-quality").generate_score(
    lambda run, **_: 1.0 if run.output["result"].isupper() else 0.5
)
validation_scorer = create_scorer(id="validation").generate_score(
    lambda run, **_: 1.0 if run.output == {"valid": True} and "query" in run.input else 0.0
)
processing_scorer = create_scorer(id="processing").generate_score(
    lambda run, **_: 1.0 if run.input.get("valid") and run.output["result"] else 0.0
)


def test_seed_workflow_evaluation_example_with_a_langgraph_graph() -> None:
    completed: list[tuple[EvalItem, dict[str, Any]]] = []

    result = run_evals(
        target=_workflow(),
        data=[
            {"input": {"query": "Process this data", "priority": "high"}},
            {"input": {"query": "Another task", "priority": "low"}},
        ],
        scorers={
            "workflow": [output_quality_scorer],
            "steps": {"validation-step": [validation_scorer], "processing-step": [processing_scorer]},
        },
        on_item_complete=lambda item, target_result, scorer_results: completed.append((item, scorer_results)),
        progress=False,
    )

    assert result.scores == {
        "workflow": {"output-quality": 0.75},
        "steps": {"validation-step": {"validation": 1.0}, "processing-step": {"processing": 1.0}},
    }
    assert result.summary.total_items == 2 and result.summary.errored_runs == 0
    _, scorer_results = next(c for c in completed if c[0].input["priority"] == "high")
    assert scorer_results["workflow"]["output-quality"].score == 1.0
    assert set(scorer_results["steps"]) == {"validation-step", "processing-step"}
    step_record = scorer_results["steps"]["processing-step"]["processing"]
    assert step_record.output == {"result": "PROCESS THIS DATA"}
    assert step_record.input == {"query": "Process this data", "priority": "high", "valid": True}
    assert step_record.entity == "my-workflow/processing-step"
    assert step_record.trace_id == result.items[0].run.run_id
    assert result.items[0].output == {
        "query": "Process this data",
        "priority": "high",
        "valid": True,
        "result": "PROCESS THIS DATA",
    }


def test_seed_workflow_example_with_a_callable_returning_step_results() -> None:
    def workflow(data: dict[str, Any]) -> dict[str, Any]:
        valid = bool(data["query"].strip())
        result = data["query"].upper() if data["priority"] == "high" else data["query"]
        return {
            "output": {**data, "valid": valid, "result": result},
            "stepResults": {
                "validation-step": {"status": "success", "payload": data, "output": {"valid": valid}},
                "processing-step": {
                    "status": "success",
                    "payload": {**data, "valid": valid},
                    "output": {"result": result},
                },
            },
        }

    result = run_evals(
        target=workflow,
        data=[
            {"input": {"query": "Process this data", "priority": "high"}},
            {"input": {"query": "Another task", "priority": "low"}},
        ],
        scorers={
            "workflow": [output_quality_scorer],
            "steps": {"validation-step": [validation_scorer], "processing-step": [processing_scorer]},
        },
        progress=False,
    )
    assert result.scores == {
        "workflow": {"output-quality": 0.75},
        "steps": {"validation-step": {"validation": 1.0}, "processing-step": {"processing": 1.0}},
    }


def test_workflow_config_with_only_workflow_scorers_has_no_nan() -> None:
    # The reference system returns NaN here (it nests only when step scorers exist).
    result = run_evals(
        target=_workflow(),
        data=[{"input": {"query": "x", "priority": "high"}}],
        scorers={"workflow": [output_quality_scorer]},
        progress=False,
    )
    assert result.scores == {"workflow": {"output-quality": 1.0}, "steps": {}}
