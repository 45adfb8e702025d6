"""Twins of the runEvals examples on the seed's code-scorer pages (completeness, content similarity,
keyword coverage, textual difference, tone), run against a real create_agent agent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents import create_agent

from agentevals import EvalResult, Scorer, run_evals
from agentevals.scorers import (
    create_completeness_scorer,
    create_content_similarity_scorer,
    create_keyword_coverage_scorer,
    create_textual_difference_scorer,
    create_tone_scorer,
)


def _evaluate(
    chat_model: Callable[..., Any], answers: dict[str, str], data: list[dict[str, Any]], scorer: Scorer
) -> tuple[EvalResult, list[float]]:
    my_agent = create_agent(chat_model(answers), tools=[])
    printed: list[float] = []
    result = run_evals(
        data=data,
        scorers=[scorer],
        target=my_agent,
        on_item_complete=lambda scorer_results: printed.append(scorer_results[scorer.id].score),
        progress=False,
    )
    assert not [f for i in result.items for f in i.failures]
    assert result.scores[scorer.id] == pytest.approx(sum(printed) / len(printed))
    return result, [i.scores[scorer.id] for i in result.items]  # type: ignore[misc]


def test_completeness_example(chat_model: Callable[..., Any]) -> None:
    questions = [
        "Explain the process of photosynthesis, including the inputs, outputs, and stages involved.",
        "What are the benefits and drawbacks of remote work for both employees and employers?",
        "Compare renewable and non-renewable energy sources in terms of cost, environmental impact, and "
        "sustainability.",
    ]
    answers = {questions[0]: questions[0], questions[1]: "It depends.", questions[2]: questions[2]}
    _, scores = _evaluate(
        chat_model, answers, [{"input": q} for q in questions], create_completeness_scorer()
    )
    assert scores[0] == 1.0 and scores[2] == 1.0  # an answer that covers every element of the question
    assert scores[1] < 0.5


def test_content_similarity_example(chat_model: Callable[..., Any]) -> None:
    data = [
        {
            "input": "Summarize the benefits of TypeScript",
            "groundTruth": "TypeScript provides static typing, better tooling support, and improved code "
            "maintainability.",
        },
        {
            "input": "What is machine learning?",
            "groundTruth": "Machine learning is a subset of AI that enables systems to learn from data "
            "without explicit programming.",
        },
    ]
    # As in the reference, the scorer compares the output with the *input* (the ground truth is only
    # carried into the record, where the seed's callback prints it).
    answers = {data[0]["input"]: data[0]["input"].upper(), data[1]["input"]: "No idea."}
    scorer = create_content_similarity_scorer()
    result, scores = _evaluate(chat_model, answers, data, scorer)
    assert scores[0] == 1.0  # case is ignored by default
    assert scores[1] < 0.3
    assert [i.scorer_results[scorer.id].ground_truth for i in result.items] == [
        d["groundTruth"] for d in data
    ]


def test_keyword_coverage_example(chat_model: Callable[..., Any]) -> None:
    questions = [
        "JavaScript frameworks like React and Vue",
        "TypeScript offers interfaces, generics, and type inference",
        "Machine learning models require data preprocessing, feature engineering, and hyperparameter tuning",
    ]
    answers = {questions[0]: f"Yes: {questions[0]}.", questions[1]: "Types.", questions[2]: questions[2]}
    _, scores = _evaluate(
        chat_model, answers, [{"input": q} for q in questions], create_keyword_coverage_scorer()
    )
    assert scores[0] == 1.0 and scores[2] == 1.0
    assert scores[1] < 0.5


def test_textual_difference_example(chat_model: Callable[..., Any]) -> None:
    data = [
        {
            "input": "Summarize the concept of recursion",
            "groundTruth": "Recursion is when a function calls itself to solve a problem by breaking it into "
            "smaller subproblems.",
        },
        {"input": "What is the capital of France?", "groundTruth": "The capital of France is Paris."},
    ]
    # Like content similarity, the reference scorer diffs the output against the input.
    answers = {data[0]["input"]: data[0]["input"], data[1]["input"]: "The capital is Paris."}
    _, scores = _evaluate(chat_model, answers, data, create_textual_difference_scorer())
    assert scores[0] == 1.0
    assert 0.0 < scores[1] < 1.0


def test_tone_example(chat_model: Callable[..., Any]) -> None:
    data = [
        {
            "input": "How was your experience with our service?",
            "groundTruth": "The service was excellent and exceeded expectations!",
        },
        {
            "input": "Tell me about the customer support",
            "groundTruth": "The support team was friendly and very helpful.",
        },
    ]
    answers = {
        data[0]["input"]: "It was great. It was wonderful.",
        data[1]["input"]: "It was great. It was terrible and awful.",
    }
    _, scores = _evaluate(chat_model, answers, data, create_tone_scorer())
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores[0] > scores[1]  # a steady tone scores higher than one that swings
