"""Prompt steps (judged by an LLM) and mixed pipelines, against the fake judge server."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agentevals import Judge, PromptStep, ScorerError, create_scorer
from agentevals.testing import FakeJudgeServer, Reply


class Statements(BaseModel):
    statements: list[str]


class Verdicts(BaseModel):
    verdicts: list[str]


def relevancy_scorer(judge: Judge) -> object:
    """The seed's createScorer shape: prompt preprocess and analyze, function score, prompt reason."""
    return (
        create_scorer(id="my-custom-scorer", name="My Custom Scorer", description="Custom", judge=judge)
        .preprocess(
            PromptStep(
                description="Split the answer into statements",
                create_prompt=lambda run, **_: f"Split into statements:\n{run.output_text}",
                output_schema=Statements,
            )
        )
        .analyze(
            {
                "description": "Judge each statement",
                "createPrompt": lambda run, results, **_: (
                    f"Question: {run.input_text}\nStatements: {results.preprocess_step_result.statements}"
                ),
                "outputSchema": Verdicts,
            }
        )
        .generate_score(
            lambda results, **_: (
                results.analyze_step_result.verdicts.count("yes") / len(results.analyze_step_result.verdicts)
            )
        )
        .generate_reason(
            PromptStep(
                description="Explain the score",
                create_prompt=lambda score, results, **_: (
                    f"Explain a score of {score} for {results.analyze_step_result.verdicts}"
                ),
            )
        )
    )


async def test_seed_create_scorer_with_prompt_steps(judge_server: FakeJudgeServer) -> None:
    judge_server.push(
        {"statements": ["Paris is the capital.", "It has 2M people."]},
        {"verdicts": ["yes", "no"]},
        "The score is 0.5 because one statement is off topic.",
    )
    scorer = relevancy_scorer(judge_server.judge(instructions="You are an expert evaluator."))
    result = await scorer.run(input="What is the capital of France?", output="Paris. 2M people.")  # type: ignore[attr-defined]
    assert result.score == 0.5
    assert result.preprocess_step_result == Statements(
        statements=["Paris is the capital.", "It has 2M people."]
    )
    assert result.analyze_step_result.verdicts == ["yes", "no"]
    assert result.reason == "The score is 0.5 because one statement is off topic."
    assert result.preprocess_prompt == "Split into statements:\nParis. 2M people."
    assert result.analyze_prompt.startswith("Question: What is the capital of France?")
    assert result.generate_reason_prompt == "Explain a score of 0.5 for ['yes', 'no']"
    assert result.generate_score_prompt is None
    assert [c.step for c in result.judge_calls] == ["preprocess", "analyze", "generate_reason"]
    assert result.prompt_tokens == 36 and result.cost_usd is not None
    systems = {r.system for r in judge_server.requests}
    assert systems == {"You are an expert evaluator."}
    assert [s.type for s in scorer.steps] == ["prompt", "prompt", "function", "prompt"]  # type: ignore[attr-defined]


async def test_prompt_generate_score_with_and_without_calculate_score(judge_server: FakeJudgeServer) -> None:
    judge_server.push({"score": 0.7}, {"score": 7})
    judge = judge_server.judge()
    plain = create_scorer(id="s", judge=judge).generate_score(
        PromptStep(description="Rate", create_prompt=lambda **_: "Rate 0-1")
    )
    result = await plain.run(output="x")
    assert result.score == 0.7 and result.generate_score_prompt == "Rate 0-1"
    scaled = create_scorer(id="s10", judge=judge).generate_score(
        PromptStep(
            description="Rate 0-10",
            create_prompt=lambda **_: "Rate 0-10",
            calculate_score=lambda output, **_: output.score / 10,
        )
    )
    result = await scaled.run(output="x")
    assert result.score == 0.7
    assert result.generate_score_step_result.score == 7


async def test_step_judge_overrides_scorer_judge(judge_server: FakeJudgeServer) -> None:
    judge_server.push({"statements": []}, "why")
    scorer = (
        create_scorer(id="two-judges", judge=judge_server.judge(instructions="scorer-level"))
        .preprocess(
            PromptStep(
                description="d",
                create_prompt=lambda **_: "p",
                output_schema=Statements,
                judge=judge_server.judge(instructions="step-level"),
            )
        )
        .generate_score(lambda **_: 0)
        .generate_reason(PromptStep(description="r", create_prompt=lambda **_: "r"))
    )
    await scorer.run(output="x")
    assert [r.system for r in judge_server.requests] == ["step-level", "scorer-level"]


def test_prompt_step_without_judge_is_a_clear_error() -> None:
    scorer = create_scorer(id="nojudge").generate_score(
        PromptStep(description="d", create_prompt=lambda **_: "p")
    )
    with pytest.raises(ScorerError, match="no judge is configured"):
        scorer.run_sync(output="x")


def test_prompt_step_validation() -> None:
    with pytest.raises(TypeError, match="needs output_schema"):
        create_scorer(id="x").analyze(PromptStep(description="d", create_prompt=lambda **_: "p"))
    with pytest.raises(TypeError, match="pydantic BaseModel subclass"):
        PromptStep(description="d", create_prompt=lambda **_: "p", output_schema=dict)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="calculate_score only applies"):
        create_scorer(id="x").analyze(
            PromptStep(
                description="d", create_prompt=lambda **_: "p", output_schema=Statements, calculate_score=len
            )
        )
    with pytest.raises(TypeError, match="unknown prompt step key"):
        create_scorer(id="x").analyze(
            {"description": "d", "create_prompt": lambda **_: "p", "schema": Statements}
        )


async def test_create_prompt_must_return_text(judge_server: FakeJudgeServer) -> None:
    scorer = create_scorer(id="x", judge=judge_server.judge()).generate_score(
        PromptStep(description="d", create_prompt=lambda **_: 42)
    )
    with pytest.raises(ScorerError, match="create_prompt must return a string"):
        await scorer.run(output="x")
    assert judge_server.requests == []


async def test_nested_scorer_judge_calls_count_towards_the_parent() -> None:
    with FakeJudgeServer([{"score": 1.0}]) as server:
        inner = create_scorer(id="inner", judge=server.judge()).generate_score(
            PromptStep(description="d", create_prompt=lambda **_: "p")
        )

        async def analyze(run: object) -> float:
            return (await inner.run(run)).score  # type: ignore[arg-type]

        outer = (
            create_scorer(id="outer")
            .analyze(analyze)
            .generate_score(lambda results, **_: results.analyze_step_result)
        )
        result = await outer.run(output="x")
    assert result.score == 1.0
    assert [c.step for c in result.judge_calls] == ["generate_score"]


async def test_failure_keeps_completed_steps_and_judge_calls(judge_server: FakeJudgeServer) -> None:
    judge_server.push({"statements": ["a"]}, Reply.error(400, "bad request"))
    scorer = (
        create_scorer(id="partial", judge=judge_server.judge())
        .preprocess(PromptStep(description="d", create_prompt=lambda **_: "p1", output_schema=Statements))
        .analyze(PromptStep(description="d", create_prompt=lambda **_: "p2", output_schema=Verdicts))
        .generate_score(lambda **_: 1)
    )
    with pytest.raises(ScorerError) as info:
        await scorer.run(output="x")
    assert info.value.step == "analyze"
    assert info.value.completed == {"preprocess": Statements(statements=["a"])}
    assert info.value.prompts == {"preprocess": "p1", "analyze": "p2"}
    assert [c.ok for c in info.value.judge_calls] == [True, False]


async def test_skip_judge_returns_a_value_without_a_judge_call(judge_server: FakeJudgeServer) -> None:
    from agentevals.steps import SkipJudge

    judge_server.push("Because it is concise.")
    reason = PromptStep(
        description="Explain",
        create_prompt=lambda run, **_: (
            SkipJudge("Nothing to explain: empty output.") if not run.output_text else "Explain the score"
        ),
    )
    scorer = (
        create_scorer(id="skip", judge=judge_server.judge())
        .generate_score(lambda **_: 1)
        .generate_reason(reason)
    )
    skipped = await scorer.run(output="")
    assert skipped.reason == "Nothing to explain: empty output."
    assert skipped.generate_reason_prompt is None and skipped.judge_calls == []
    asked = await scorer.run(output="short")
    assert asked.reason == "Because it is concise." and asked.generate_reason_prompt == "Explain the score"
    assert len(judge_server.requests) == 1


async def test_judge_requests_are_marked_and_is_scoring_is_true_inside_steps(
    judge_server: FakeJudgeServer,
) -> None:
    from agentevals._scoring._judge._request import JUDGE_METADATA_KEY, build_request
    from agentevals.steps import is_scoring

    request = build_request(
        model="m",
        instructions="",
        prompt="p",
        schema=None,
        output={},
        max_tokens=None,
        temperature=None,
        timeout=1.0,
        api_base=None,
        api_key=None,
        extra={"metadata": {"team": "a"}},
    )
    assert request["metadata"] == {"team": "a", JUDGE_METADATA_KEY: True}
    seen: list[bool] = []
    scorer = create_scorer(id="inside").generate_score(lambda **_: seen.append(is_scoring()) or 1)
    await scorer.run(output="x")
    assert seen == [True] and not is_scoring()
