"""Twins of the runEvals examples on the seed's prebuilt-scorer pages: a real create_agent agent (which
retrieves with a tool, so context-based judges have context) scored by the prebuilt LLM judges, judged
by the fake judge server answering every judge step with schema-valid JSON."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool

from agentevals import Run, Scorer, ScoreResult, run_evals
from agentevals.scorers import llm
from agentevals.testing import FakeJudgeServer, schema_responder


@tool
def search(query: str) -> str:
    """Search the knowledge base."""
    return f"Knowledge base entry about {query}: it is well documented and widely used."


def _tool_results(run: Run) -> list[str]:
    return [str(inv.result) for m in run.output_messages for inv in m.tool_invocations]


EXAMPLES: dict[str, tuple[Callable[[Any], Scorer], list[dict[str, Any]]]] = {
    "answer-relevancy": (
        lambda judge: llm.create_answer_relevancy_scorer(judge),
        [
            {"input": "What are the health benefits of regular exercise?"},
            {"input": "What should a healthy breakfast include?"},
            {"input": "What are the benefits of meditation?"},
        ],
    ),
    "answer-similarity": (
        lambda judge: llm.create_answer_similarity_scorer(judge),
        [
            {"input": "What is 2+2?", "groundTruth": "4"},
            {"input": "What is the capital of France?", "groundTruth": "The capital of France is Paris"},
            {
                "input": "What are the primary colors?",
                "groundTruth": "The primary colors are red, blue, and yellow",
            },
        ],
    ),
    "bias": (
        lambda judge: llm.create_bias_scorer(judge),
        [
            {"input": "What makes someone a good leader?"},
            {"input": "How do different age groups perform at work?"},
            {"input": "What is the best hiring practice?"},
        ],
    ),
    "context-precision": (
        lambda judge: llm.create_context_precision_scorer(judge, get_context=_tool_results),
        [
            {"input": "How does photosynthesis work in plants?"},
            {"input": "What are the mental and physical benefits of exercise?"},
        ],
    ),
    "faithfulness": (
        lambda judge: llm.create_faithfulness_scorer(judge),
        [
            {"input": "Tell me about the Tesla Model 3."},
            {"input": "What are the key features of this electric vehicle?"},
        ],
    ),
    "hallucination": (
        lambda judge: llm.create_hallucination_scorer(judge),
        [
            {"input": "When was the first iPhone released?"},
            {"input": "Tell me about the original iPhone announcement."},
        ],
    ),
    "toxicity": (
        lambda judge: llm.create_toxicity_scorer(judge),
        [
            {"input": "What do you think about the new team member?"},
            {"input": "How was the meeting discussion?"},
            {"input": "Can you provide feedback on the project proposal?"},
        ],
    ),
}


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_seed_scorer_page_run_evals_example(
    example: str, judge_server: FakeJudgeServer, chat_model: Callable[..., Any]
) -> None:
    make_scorer, data = EXAMPLES[example]
    questions = [item["input"] for item in data]
    model = chat_model(
        dict.fromkeys(questions, "It is well documented and widely used, according to the knowledge base."),
        tool_calls={
            q: {"name": "search", "args": {"query": q}, "id": f"call_{i}"} for i, q in enumerate(questions)
        },
    )
    my_agent = create_agent(model, tools=[search], system_prompt="Answer from the knowledge base.")
    judge_server.responder = schema_responder()
    scorer = make_scorer(judge_server.judge())
    printed: list[dict[str, Any]] = []

    result = run_evals(
        data=data,
        scorers=[scorer],
        target=my_agent,
        on_item_complete=lambda scorer_results: printed.append(
            {"score": scorer_results[scorer.id].score, "reason": scorer_results[scorer.id].reason}
        ),
        progress=False,
    )

    failures = [r for i in result.items for r in i.failures]
    assert not failures, failures
    assert set(result.scores) == {scorer.id}
    assert 0.0 <= result.scores[scorer.id] <= 1.0
    assert len(printed) == len(data) and all(0.0 <= p["score"] <= 1.0 for p in printed)
    assert all(isinstance(p["reason"], str) and p["reason"] for p in printed)
    records = [i.results[scorer.id] for i in result.items]
    assert all(isinstance(r, ScoreResult) and r.judge_calls for r in records)
    assert result.scores[scorer.id] == pytest.approx(sum(p["score"] for p in printed) / len(printed))
    assert len(judge_server.requests) >= len(data)
