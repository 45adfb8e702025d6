"""Answer similarity against scripted judge replies."""

from __future__ import annotations

from typing import Any

import pytest
from item_counts import asks_again_for, item_bounds

from agentevals import ScorerError
from agentevals.scorers.llm import create_answer_similarity_scorer
from agentevals.scorers.llm._answer_similarity import NO_GROUND_TRUTH
from agentevals.testing import FakeJudgeServer, Reply


def units(n: int) -> dict[str, Any]:
    return {"output_units": [f"o{i}" for i in range(n)], "ground_truth_units": [f"g{i}" for i in range(n)]}


def analysis(*types: str, extra: int = 0, contradictions: int = 0) -> dict[str, Any]:
    return {
        "matches": [
            {
                "ground_truth_unit": f"g{i}",
                "output_unit": None if t == "missing" else f"o{i}",
                "match_type": t,
                "explanation": "e",
            }
            for i, t in enumerate(types)
        ],
        "extra_in_output": [f"x{i}" for i in range(extra)],
        "contradictions": [
            {"output_unit": "o", "ground_truth_unit": "g", "explanation": "e"} for _ in range(contradictions)
        ],
    }


@pytest.mark.parametrize(
    ("types", "extra", "contradictions", "expected"),
    [
        (["exact", "exact"], 0, 0, 1.0),
        (["semantic", "semantic"], 0, 0, 0.67),  # 0.8 / 1.2
        (["missing", "missing"], 0, 0, 0.0),
        (["exact", "partial", "missing"], 0, 0, 0.4),  # (1.2 + 0.4 - 0.15) / 3.6
        (["exact"], 10, 0, 0.8),  # extra info penalty capped at 0.2
        (["exact"], 2, 0, 0.9),
        (["exact", "exact"], 0, 1, 0.0),  # contradiction penalty 1.0
    ],
)
async def test_formula(
    judge_server: FakeJudgeServer, types: list[str], extra: int, contradictions: int, expected: float
) -> None:
    judge_server.push(units(len(types)), analysis(*types, extra=extra, contradictions=contradictions), "why")
    scorer = create_answer_similarity_scorer(judge_server.judge())
    result = await scorer.run(input="q", output="a", ground_truth="The capital of France is Paris")
    assert result.score == expected
    assert result.reason == "why"


async def test_fields_prompts_and_scale(judge_server: FakeJudgeServer) -> None:
    judge_server.push(units(1), analysis("semantic"), "Close paraphrase.")
    scorer = create_answer_similarity_scorer(judge_server.judge(), {"scale": 10, "semantic_threshold": 0.6})
    result = await scorer.run(input="Capital?", output="Paris is the capital", ground_truth="It is Paris")
    assert result.raw_score == 5.0  # 0.6 / 1.2 × 10
    assert result.preprocess_step_result.ground_truth_units == ["g0"]
    assert result.analyze_step_result.matches[0].match_type == "semantic"
    assert "It is Paris" in result.preprocess_prompt and "Paris is the capital" in result.preprocess_prompt
    assert "1. g0" in result.analyze_prompt and "1. o0" in result.analyze_prompt
    assert "It is Paris" in result.generate_reason_prompt  # type: ignore[operator]


async def test_non_string_ground_truth_is_json(judge_server: FakeJudgeServer) -> None:
    judge_server.push(units(1), analysis("exact"), "ok")
    result = await create_answer_similarity_scorer(judge_server.judge()).run(
        input="q", output="a", ground_truth={"answer": 4}
    )
    assert '{"answer": 4}' in result.preprocess_prompt  # type: ignore[operator]


async def test_missing_ground_truth(judge_server: FakeJudgeServer) -> None:
    with pytest.raises(ScorerError, match=r"needs run\.ground_truth"):
        await create_answer_similarity_scorer(judge_server.judge()).run(input="q", output="a")
    assert judge_server.requests == []
    judge_server.push(units(0), analysis())
    lenient = create_answer_similarity_scorer(judge_server.judge(), require_ground_truth=False)
    result = await lenient.run(input="q", output="a")
    assert result.score == 0.0 and result.reason == NO_GROUND_TRUTH
    assert result.generate_reason_prompt is None and len(judge_server.requests) == 2


async def test_empty_answer_scores_zero_and_malformed_retry(judge_server: FakeJudgeServer) -> None:
    no_answer_units = {"output_units": [], "ground_truth_units": ["g0"]}
    judge_server.push(Reply.malformed(), no_answer_units, analysis("missing"), "Nothing to compare.")
    result = await create_answer_similarity_scorer(judge_server.judge()).run(
        input="q", output="", ground_truth="x"
    )
    assert result.score == 0.0 and result.judge_calls[0].attempts == 2


@pytest.mark.parametrize(
    ("extracted", "field"),
    [
        ({"output_units": [], "ground_truth_units": ["g0"]}, "output_units"),
        ({"output_units": ["o0"], "ground_truth_units": []}, "ground_truth_units"),
    ],
)
async def test_no_units_from_a_non_empty_text_are_asked_again(
    judge_server: FakeJudgeServer, extracted: dict[str, Any], field: str
) -> None:
    judge_server.push(extracted, units(1), analysis("exact"), "r")
    result = await create_answer_similarity_scorer(judge_server.judge()).run(
        input="q", output="Paris.", ground_truth="Paris."
    )
    assert result.score == 1.0 and result.judge_calls[0].attempts == 2
    first, retry = judge_server.requests[:2]
    assert item_bounds(first, "output_units") == item_bounds(first, "ground_truth_units") == (1, 3)
    assert asks_again_for(retry, field, 1)


async def test_the_judge_is_asked_for_one_match_per_reference_unit_and_asked_again_for_fewer(
    judge_server: FakeJudgeServer,
) -> None:
    judge_server.push(units(2), analysis("exact"), analysis("exact", "missing"), "r")
    result = await create_answer_similarity_scorer(judge_server.judge()).run(
        input="q", output="a", ground_truth="g"
    )
    assert result.judge_calls[1].attempts == 2
    asked, retry = judge_server.requests[1:3]
    assert item_bounds(asked, "matches") == (2, 2)
    assert item_bounds(asked, "contradictions") == item_bounds(asked, "extra_in_output") == (None, 2)
    assert asks_again_for(retry, "matches", 2)


@pytest.mark.parametrize(
    "options",
    [{"semantic_threshold": 1.5}, {"missing_penalty": -1}, {"require_ground_truth": "yes"}, {"scale": -2}],
)
def test_invalid_options(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="answer similarity: option"):
        create_answer_similarity_scorer("openai/gpt-4o-mini", options)


@pytest.mark.parametrize(
    ("question", "truth", "answer", "types", "expected"),
    [
        ("What is 2+2?", "4", "4", ["exact"], 1.0),
        ("What is the capital of France?", "The capital of France is Paris", "Paris", ["semantic"], 0.67),
        (
            "What are the primary colors?",
            "The primary colors are red, blue, and yellow",
            "Red and blue.",
            ["exact", "exact", "missing"],
            0.63,  # (1.2 + 1.2 - 0.15) / 3.6 = 0.625, rounded half up
        ),
    ],
)
async def test_seed_example(
    judge_server: FakeJudgeServer, question: str, truth: str, answer: str, types: list[str], expected: float
) -> None:
    """Twin of the seed's runEvals data: each item scored against its groundTruth."""
    judge_server.push(units(len(types)), analysis(*types), f"Compared with: {truth}")
    result = await create_answer_similarity_scorer(judge_server.judge()).run(
        input=question, output=answer, ground_truth=truth
    )
    assert result.score == expected
    assert result.reason == f"Compared with: {truth}"
