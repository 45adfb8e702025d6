"""Summarization against scripted judge replies."""

from __future__ import annotations

from typing import Any

import pytest
from item_counts import asks_again_for, item_bounds

from agentevals import ScorerError
from agentevals.scorers.llm import create_summarization_scorer
from agentevals.testing import FakeJudgeServer, Reply

SOURCE = "The meeting moved to Friday. Budget was approved. Alice leads the project."


def aligned(supported: list[bool], questions: int) -> dict[str, Any]:
    return {
        "alignment": [{"claim": f"c{i}", "supported": s, "reason": "r"} for i, s in enumerate(supported)],
        "questions": [f"q{i}" for i in range(questions)],
    }


def coverage(*answered: bool) -> dict[str, Any]:
    return {"coverage": [{"question": f"q{i}", "answered": a, "reason": "r"} for i, a in enumerate(answered)]}


@pytest.mark.parametrize(
    ("supported", "answered", "expected"),
    [
        ([True, True], [True, True], 1.0),
        ([False], [False], 0.0),
        ([True, False], [True, True, True], 0.5),  # alignment 0.5 < coverage 1
        ([True], [True, False, False], 0.33),  # coverage 1/3 < alignment 1
    ],
)
async def test_formula(
    judge_server: FakeJudgeServer, supported: list[bool], answered: list[bool], expected: float
) -> None:
    judge_server.push(aligned(supported, len(answered)), coverage(*answered), "reason")
    result = await create_summarization_scorer(judge_server.judge()).run(input=SOURCE, output="Summary.")
    assert result.score == expected and result.reason == "reason"


async def test_fields_source_options_and_max_questions(judge_server: FakeJudgeServer) -> None:
    judge_server.push(aligned([True], 4), coverage(True, False), "Covers half.")
    scorer = create_summarization_scorer(
        judge_server.judge(), {"max_questions": 2, "source": SOURCE}, scale=2
    )
    result = await scorer.run(
        input="Summarise the notes",
        output=[
            {"role": "assistant", "content": "Draft."},
            {"role": "assistant", "content": "Meeting Friday."},
        ],
    )
    assert result.raw_score == 1.0
    assert result.preprocess_step_result.questions == ["q0", "q1", "q2", "q3"]
    assert SOURCE in (result.preprocess_prompt or "") and "Meeting Friday." in (
        result.preprocess_prompt or ""
    )
    analyze_prompt = result.analyze_prompt or ""
    assert "2. q1" in analyze_prompt and "q2" not in analyze_prompt and SOURCE not in analyze_prompt
    assert "1. q1" in (result.generate_reason_prompt or "")
    judge_server.push(aligned([True], 1), coverage(True), "r")
    extracted = create_summarization_scorer(
        judge_server.judge(), source="static", get_source=lambda run: "dyn"
    )
    assert "dyn" in ((await extracted.run(input="q", output="s")).preprocess_prompt or "")


async def test_the_judge_is_told_how_many_claims_questions_and_coverage_entries(
    judge_server: FakeJudgeServer,
) -> None:
    judge_server.push(aligned([], 0), aligned([True], 3), coverage(True), coverage(True, True, False), "r")
    scorer = create_summarization_scorer(judge_server.judge(), max_questions=2)
    result = await scorer.run(input=SOURCE, output="Meeting on Friday.")
    assert result.score == 1.0 and [c.attempts for c in result.judge_calls] == [2, 2, 1]
    draft, draft_again, cover, cover_again = judge_server.requests[:4]
    assert item_bounds(draft, "alignment") == (1, 9) and item_bounds(draft, "questions") == (1, 2)
    assert asks_again_for(draft_again, "alignment", 1) or asks_again_for(draft_again, "questions", 1)
    assert item_bounds(cover, "coverage") == (2, 2) and asks_again_for(cover_again, "coverage", 2)
    judge_server.push(aligned([], 1), coverage(False))
    await scorer.run(input=SOURCE, output="")
    assert item_bounds(judge_server.requests[-2], "alignment") == (None, 0)  # an empty summary


async def test_empty_cases_errors_and_retry(judge_server: FakeJudgeServer) -> None:
    judge_server.push(aligned([], 2), coverage(False, False))
    result = await create_summarization_scorer(judge_server.judge()).run(input=SOURCE, output="")
    assert result.score == 0.0 and result.generate_reason_prompt is None
    with pytest.raises(ValueError, match="maxQuestions must be at least 1"):
        create_summarization_scorer("openai/gpt-4o-mini", max_questions=0)
    with pytest.raises(ScorerError, match="needs the source text"):
        await create_summarization_scorer(judge_server.judge()).run(input="", output="s")
    judge_server.push(aligned([True], 2), *[coverage(True)] * 4)
    with pytest.raises(ScorerError, match=r"after 4 attempt.*at coverage: List should have at least 2"):
        await create_summarization_scorer(judge_server.judge()).run(input=SOURCE, output="s")
    judge_server.push(Reply.malformed(), aligned([True], 1), coverage(True), "r")
    assert (
        await create_summarization_scorer(judge_server.judge()).run(input=SOURCE, output="s")
    ).score == 1.0
