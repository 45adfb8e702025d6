"""Answer relevancy against scripted judge replies."""

from __future__ import annotations

import pytest
from item_counts import asks_again_for, item_bounds

from agentevals import ScorerError
from agentevals.scorers.llm import AnswerRelevancyOptions, create_answer_relevancy_scorer
from agentevals.testing import FakeJudgeServer, Reply

Q = "What are the health benefits of regular exercise?"
A = "Exercise improves heart health and mood. Paris is in France."


def verdicts(*labels: str) -> dict[str, object]:
    return {"results": [{"statement": f"s{i}", "result": v, "reason": "r"} for i, v in enumerate(labels)]}


def statements(n: int) -> dict[str, object]:
    return {"statements": [f"s{i}" for i in range(n)]}


@pytest.mark.parametrize(
    ("labels", "expected"),
    [(["yes", "yes"], 1.0), (["no", "no"], 0.0), (["yes", "unsure", "no"], 0.43), (["unsure"], 0.3)],
)
async def test_formula(judge_server: FakeJudgeServer, labels: list[str], expected: float) -> None:
    judge_server.push(statements(len(labels)), verdicts(*labels), "The score is X because.")
    result = await create_answer_relevancy_scorer(judge_server.judge()).run(input=Q, output=A)
    assert result.score == expected
    assert result.reason == "The score is X because."


async def test_result_fields_and_prompts(judge_server: FakeJudgeServer) -> None:
    judge_server.push(statements(2), verdicts("yes", "no"), "The score is 0.5 because half is off topic.")
    scorer = create_answer_relevancy_scorer(judge_server.judge())
    result = await scorer.run(input=Q, output=A)
    assert result.score == 0.5
    assert result.preprocess_step_result.statements == ["s0", "s1"]
    assert [v.result for v in result.analyze_step_result.results] == ["yes", "no"]
    assert A in result.preprocess_prompt
    assert Q in result.analyze_prompt and "1. s0" in result.analyze_prompt
    assert result.generate_reason_prompt is not None and "0.5" in result.generate_reason_prompt
    assert [c.step for c in result.judge_calls] == ["preprocess", "analyze", "generate_reason"]
    assert judge_server.requests[0].system.startswith("You judge whether parts of an answer")


async def test_empty_answer_scores_zero_without_reason_call(judge_server: FakeJudgeServer) -> None:
    judge_server.push(statements(0), verdicts())
    result = await create_answer_relevancy_scorer(judge_server.judge()).run(input=Q, output="")
    assert result.score == 0.0
    assert result.reason == (
        "The score is 0.0 because the answer is empty and contains no statements to judge."
    )
    assert result.generate_reason_prompt is None and len(judge_server.requests) == 2


async def test_malformed_reply_is_retried(judge_server: FakeJudgeServer) -> None:
    judge_server.push(Reply.malformed(), statements(1), verdicts("maybe"), verdicts("yes"), "ok")
    result = await create_answer_relevancy_scorer(judge_server.judge()).run(input=Q, output=A)
    assert result.score == 1.0
    assert [c.attempts for c in result.judge_calls] == [2, 2, 1]


async def test_the_judge_is_asked_for_one_verdict_per_statement_and_asked_again_for_fewer(
    judge_server: FakeJudgeServer,
) -> None:
    judge_server.push(statements(3), verdicts("yes"), verdicts("yes", "no", "yes"), "r")
    result = await create_answer_relevancy_scorer(judge_server.judge()).run(input=Q, output=A)
    assert result.score == 0.67 and [c.attempts for c in result.judge_calls] == [1, 2, 1]
    extract, judge, retry = judge_server.requests[:3]
    assert item_bounds(extract, "statements") == (1, 30)  # one at least, one per two characters at most
    assert item_bounds(judge, "results") == (3, 3)
    assert asks_again_for(retry, "results", 3)


async def test_an_empty_answer_has_no_statement(judge_server: FakeJudgeServer) -> None:
    judge_server.push(statements(0), verdicts())
    await create_answer_relevancy_scorer(judge_server.judge()).run(input=Q, output="")
    assert item_bounds(judge_server.requests[0], "statements") == (None, 0)


async def test_scale_and_weight_merge_key_by_key(judge_server: FakeJudgeServer) -> None:
    judge_server.push(statements(2), verdicts("yes", "unsure"), "r")
    scorer = create_answer_relevancy_scorer(judge_server.judge(), {"scale": 10})
    result = await scorer.run(input=Q, output=A)
    assert result.raw_score == 6.5 and result.score == 0.65  # scale declares the range (0, 10)
    opts = AnswerRelevancyOptions(uncertainty_weight=0.5)
    judge_server.push(statements(2), verdicts("yes", "unsure"), "r")
    scorer = create_answer_relevancy_scorer(judge_server.judge(), opts, scale=2)
    assert (await scorer.run(input=Q, output=A)).raw_score == 1.5


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"scale": 0}, "scale must be"),
        ({"uncertainty_weight": 2}, "uncertainty_weight must be"),
        ({"weight": 1}, "unknown option 'weight'"),
    ],
)
def test_invalid_options(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        create_answer_relevancy_scorer("openai/gpt-4o-mini", options)


def test_judge_instructions_kept_or_filled(judge_server: FakeJudgeServer) -> None:
    own = judge_server.judge(instructions="Mine.")
    assert create_answer_relevancy_scorer(own).judge.instructions == "Mine."  # type: ignore[union-attr]
    filled = create_answer_relevancy_scorer(judge_server.judge()).judge
    assert filled is not None and filled.instructions.startswith("You judge")
    assert create_answer_relevancy_scorer("openai/gpt-4o-mini").judge.model == "openai/gpt-4o-mini"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "question",
    [
        "What are the health benefits of regular exercise?",
        "What should a healthy breakfast include?",
        "What are the benefits of meditation?",
    ],
)
async def test_seed_example(judge_server: FakeJudgeServer, question: str) -> None:
    """Twin of the seed's runEvals example: each item's answer scored with score and reason."""
    answer = "It helps. Also, the weather is nice."
    judge_server.push(
        {"statements": ["It helps.", "The weather is nice."]},
        {
            "results": [
                {"statement": "It helps.", "result": "unsure", "reason": "vague"},
                {"statement": "The weather is nice.", "result": "no", "reason": "off topic"},
            ]
        },
        "The score is 0.15 because the answer is vague and partly off topic.",
    )
    result = await create_answer_relevancy_scorer(judge_server.judge()).run(input=question, output=answer)
    assert result.score == 0.15
    assert result.reason.startswith("The score is 0.15")  # type: ignore[union-attr]


async def test_failed_reason_call_keeps_its_prompt_and_judge_call(judge_server: FakeJudgeServer) -> None:
    from agentevals._model._failure import failure_record
    from agentevals._model._run import Run

    judge_server.push(statements(1), verdicts("yes"), Reply.server_error(), Reply.server_error())
    scorer = create_answer_relevancy_scorer(judge_server.judge(max_attempts=2))
    run = Run(input=Q, output=A)
    with pytest.raises(ScorerError) as caught:
        await scorer.run(run)
    record = failure_record(scorer=scorer, run=run, error=caught.value)
    assert record.failed_step == "generate_reason"
    assert record.generate_reason_prompt is not None and "The score is 1.0" in record.generate_reason_prompt
    assert [c.ok for c in record.judge_calls] == [True, True, False]
    assert record.analyze_step_result.results[0].result == "yes"
