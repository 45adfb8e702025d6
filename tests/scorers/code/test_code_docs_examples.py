"""Python twins of the API reference examples: each prebuilt code scorer in ``arun_evals``.

The reference runs its prompts through an agent; here a callable with canned answers stands in for the
agent, so the scores are exact. Expected values were recorded from @mastra/evals 1.10.2 on the same
input/answer pairs (our scorers reproduce them bit for bit).
"""

from __future__ import annotations

from agentevals import Scorer, arun_evals
from agentevals.scorers import (
    create_completeness_scorer,
    create_content_similarity_scorer,
    create_keyword_coverage_scorer,
    create_textual_difference_scorer,
    create_tone_scorer,
)

ANSWERS = {
    "Explain the process of photosynthesis, including the inputs, outputs, and stages involved.": (
        "Photosynthesis converts light energy into chemical energy. Plants take in carbon dioxide and water, "
        "produce glucose and oxygen, and the stages are the light-dependent reactions and the Calvin cycle."
    ),
    "What are the benefits and drawbacks of remote work for both employees and employers?": (
        "Remote work gives employees flexibility and saves commuting time, while employers save on office "
        "costs. Drawbacks include isolation and communication challenges."
    ),
    "Compare renewable and non-renewable energy sources in terms of cost, environmental impact, and "
    "sustainability.": (
        "Renewable sources like solar and wind have low environmental impact and are sustainable; "
        "non-renewable sources such as coal are cheaper today but polluting."
    ),
    "JavaScript frameworks like React and Vue": "React and Vue are popular JavaScript frameworks.",
    "TypeScript offers interfaces, generics, and type inference": "TypeScript has interfaces and generics.",
    "Machine learning models require data preprocessing, feature engineering, and hyperparameter tuning": (
        "You need to clean data and tune hyperparameters."
    ),
    "Summarize the concept of recursion": (
        "Recursion is when a function calls itself to solve a problem by breaking it into smaller "
        "subproblems."
    ),
    "What is the capital of France?": "The capital of France is Paris.",
    "Summarize the benefits of TypeScript": (
        "TypeScript provides static typing, better tooling support, and improved code maintainability."
    ),
    "What is machine learning?": (
        "Machine learning is a subset of AI that enables systems to learn from data without explicit "
        "programming."
    ),
    "How was your experience with our service?": "The service was excellent and exceeded expectations!",
    "Tell me about the customer support": "The support team was friendly and very helpful.",
}


def agent(question: str) -> str:
    return ANSWERS[question]


async def _scores(scorer: Scorer, data: list[dict[str, str]]) -> list[float]:
    result = await arun_evals(data=data, scorers=[scorer], target=agent, progress=False)
    assert result.summary.scorer_errors == 0
    return [item.results[scorer.id].score for item in result.items]


async def test_completeness_example() -> None:
    prompts = list(ANSWERS)[:3]
    scores = await _scores(create_completeness_scorer(), [{"input": p} for p in prompts])
    assert scores == [0.36363636363636365, 0.46153846153846156, 0.46153846153846156]


async def test_content_similarity_example() -> None:
    data = [
        {
            "input": "Summarize the benefits of TypeScript",
            "ground_truth": ANSWERS["Summarize the benefits of TypeScript"],
        },
        {"input": "What is machine learning?", "ground_truth": ANSWERS["What is machine learning?"]},
    ]
    scores = await _scores(create_content_similarity_scorer(), data)
    # The scorer compares input with output (the ground truth is only carried along, as in Mastra).
    assert scores == [0.24778761061946902, 0.3148148148148148]


async def test_keyword_coverage_example() -> None:
    prompts = list(ANSWERS)[3:6]
    scores = await _scores(create_keyword_coverage_scorer(), [{"input": p} for p in prompts])
    assert scores == [1.0, 0.5, 0.1]


async def test_textual_difference_example() -> None:
    data = [
        {
            "input": "Summarize the concept of recursion",
            "ground_truth": ANSWERS["Summarize the concept of recursion"],
        },
        {"input": "What is the capital of France?", "ground_truth": "The capital of France is Paris."},
    ]
    assert await _scores(create_textual_difference_scorer(), data) == [0.3111111111111111, 0.6557377049180327]


async def test_tone_example() -> None:
    data = [
        {"input": "How was your experience with our service?"},
        {"input": "Tell me about the customer support"},
    ]
    result = await arun_evals(data=data, scorers=[create_tone_scorer()], target=agent, progress=False)
    found = [item.results["tone"].preprocess_step_result for item in result.items]
    assert [f["score"] for f in found] == [1.0, 1.0]  # one sentence each: no variance
    assert found[0]["avg_sentiment"] == 3 / 7  # excellent 3 over 7 tokens (Mastra: 0.42857142857142855)
    assert found[1]["avg_sentiment"] == 0.75  # support 2 + friendly 2 + helpful 2 over 8 tokens
    assert result.scores == {"tone": 1.0}
