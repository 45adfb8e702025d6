"""The scorer pipeline, with Python twins of the seed's createScorer and MastraScorer examples."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from agentevals import Run, ScorerError, ScoreResult, create_scorer
from agentevals.scorers.utils import create_agent_test_run, create_test_message
from agentevals.steps import StepResults


def test_seed_mastra_scorer_usage_example() -> None:
    scorer = (
        create_scorer(id="quality-scorer", name="Quality Scorer", description="Evaluates response quality")
        .preprocess(lambda run, **_: {"word_count": len(run.output.split(" "))})
        .analyze(
            lambda run, results, **_: {"has_substance": results.preprocess_step_result["word_count"] > 10}
        )
        .generate_score(lambda results, **_: 1.0 if results.analyze_step_result["has_substance"] else 0.0)
        .generate_reason(
            lambda score, results, **_: (
                f"Score: {score}. Response has {results.preprocess_step_result['word_count']} words."
            )
        )
    )
    result = scorer.run_sync(
        input="What is machine learning?",
        output="Machine learning is a subset of artificial intelligence that learns patterns from data.",
    )
    assert result.score == 1.0
    assert result.reason == "Score: 1.0. Response has 13 words."
    assert result.preprocess_step_result == {"word_count": 13}
    assert result.analyze_step_result == {"has_substance": True}
    assert result.scorer_id == "quality-scorer" and result.scorer_name == "Quality Scorer"
    short = scorer.run_sync(input="What is ML?", output="A subset of AI.")
    assert short.score == 0.0 and short.reason == "Score: 0.0. Response has 4 words."


def test_seed_agent_type_shortcut_example() -> None:
    scorer = (
        create_scorer(id="agent-response-quality", description="Evaluates agent responses", type="agent")
        .preprocess(lambda run, **_: {"user_message": run.input.input_messages[0].content})
        .generate_score(lambda run, **_: 1.0 if len(run.output[0].content) > 10 else 0.5)
    )
    run = create_agent_test_run(
        input_messages=[create_test_message("Tell me a joke", role="user")],
        output=[create_test_message("Why did the chicken cross the road?", role="assistant")],
    )
    result = scorer.run_sync(run)
    assert result.score == 1.0
    assert result.preprocess_step_result == {"user_message": "Tell me a joke"}
    assert scorer.type == "agent"
    terse = create_agent_test_run(
        input_messages=["Tell me a joke"], output=[create_test_message("No.", role="assistant")]
    )
    assert scorer.run_sync(terse).score == 0.5


def test_seed_custom_types_example() -> None:
    scorer = create_scorer(id="custom-scorer", description="Evaluates custom data").generate_score(
        lambda run, **_: run.output["confidence"]
    )
    result = scorer.run_sync(
        input={"query": "q", "context": ["c"]}, output={"answer": "a", "confidence": 0.8}
    )
    assert result.score == 0.8
    assert result.input == {"query": "q", "context": ["c"]}


def test_seed_agent_trace_length_example() -> None:
    scorer = create_scorer(
        id="agent-trace-length", description="Evaluates agent response length", type="agent"
    ).generate_score(lambda run, **_: 0 if len(run.output[0].content) > 50 else 1)
    long_run = create_agent_test_run(
        input_messages=["hi"], output=[create_test_message("x" * 51, role="assistant")]
    )
    assert scorer.run_sync(long_run).score == 0.0
    assert isinstance(scorer.run_sync(long_run).score, float)


async def test_async_steps_and_run_fields_as_keywords() -> None:
    async def preprocess(run: Run) -> int:
        await asyncio.sleep(0)
        return len(run.output_text)

    async def score(results: StepResults) -> float:
        return results.preprocess_step_result / 10

    scorer = create_scorer(id="async").preprocess(preprocess).generate_score(score)
    result = await scorer.run(
        input="q",
        output="0123456789",
        ground_truth="g",
        run_id="r-1",
        request_context={"user": "u"},
    )
    assert isinstance(result, ScoreResult)
    assert (result.score, result.run_id, result.ground_truth, result.request_context) == (
        1.0,
        "r-1",
        "g",
        {"user": "u"},
    )
    assert set(result.step_durations_ms) == {"preprocess", "generate_score"}
    assert result.preprocess_prompt is None and result.judge_calls == []


def test_steps_receive_only_the_keywords_they_accept() -> None:
    seen: dict[str, Any] = {}

    def reason(*, score: float) -> str:
        seen["score"] = score
        return "ok"

    scorer = (
        create_scorer(id="kw")
        .preprocess(lambda run: run.output_text.upper())
        .generate_score(lambda results: float(results.preprocess_step_result == "HI"))
        .generate_reason(reason)
    )
    assert scorer.run_sync(output="hi").reason == "ok"
    assert seen == {"score": 1.0}


def test_missing_generate_score_is_a_clear_error() -> None:
    scorer = create_scorer(id="incomplete").preprocess(lambda run, **_: 1)
    with pytest.raises(ScorerError, match=r"no generate_score step; add one with \.generate_score"):
        scorer.run_sync(output="x")


@pytest.mark.parametrize("bad", [math.nan, math.inf, "0.5", None, [1]])
def test_non_finite_or_non_numeric_scores_are_errors(bad: Any) -> None:
    scorer = create_scorer(id="bad").generate_score(lambda **_: bad)
    with pytest.raises(ScorerError, match="generate_score must return a finite number") as info:
        scorer.run_sync(output="x")
    assert info.value.step == "generate_score"


def test_failing_step_names_scorer_and_step_and_chains_the_cause() -> None:
    def analyze(**_: Any) -> None:
        raise KeyError("missing")

    scorer = (
        create_scorer(id="fragile")
        .preprocess(lambda **_: {"a": 1})
        .analyze(analyze)
        .generate_score(lambda **_: 1)
    )
    with pytest.raises(ScorerError) as info:
        scorer.run_sync(output="x")
    error = info.value
    assert (error.scorer_id, error.step) == ("fragile", "analyze")
    assert isinstance(error.__cause__, KeyError)
    assert error.completed == {"preprocess": {"a": 1}}
    assert "scorer 'fragile' failed in step 'analyze'" in str(error)


def test_reason_must_be_text() -> None:
    scorer = create_scorer(id="r").generate_score(lambda **_: 1).generate_reason(lambda **_: 42)
    with pytest.raises(ScorerError, match="generate_reason must return a string"):
        scorer.run_sync(output="x")


def test_builder_returns_new_scorers_and_replaces_steps() -> None:
    base = create_scorer(id="base").generate_score(lambda **_: 0.25)
    with_reason = base.generate_reason(lambda **_: "first")
    replaced = with_reason.generate_reason(lambda **_: "second")
    assert base.run_sync(output="x").reason is None
    assert with_reason.run_sync(output="x").reason == "first"
    assert replaced.run_sync(output="x").reason == "second"
    assert [s.name for s in replaced.steps] == ["generate_score", "generate_reason"]
    renamed = replaced.with_id("variant")
    assert renamed.run_sync(output="x").scorer_id == "variant"


def test_steps_run_in_canonical_order_whatever_the_chaining_order() -> None:
    order: list[str] = []
    scorer = (
        create_scorer(id="order")
        .generate_reason(lambda **_: order.append("reason") or "r")
        .generate_score(lambda **_: order.append("score") or 1)
        .preprocess(lambda **_: order.append("pre"))
    )
    scorer.run_sync(output="x")
    assert order == ["pre", "score", "reason"]


def test_invalid_configuration_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="non-empty string id"):
        create_scorer(id="")
    with pytest.raises(ValueError, match="type must be"):
        create_scorer(id="x", type="workflow")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a function, a PromptStep, or a dict"):
        create_scorer(id="x").analyze(42)
    with pytest.raises(TypeError, match="either a Run or its fields"):
        create_scorer(id="x").generate_score(lambda **_: 1).run_sync(Run(output="a"), output="b")


async def test_run_sync_works_inside_a_running_event_loop() -> None:
    scorer = create_scorer(id="jupyter").generate_score(lambda **_: 0.5)
    assert scorer.run_sync(output="x").score == 0.5


def test_concurrent_runs_do_not_share_state() -> None:
    async def slow_pre(run: Run) -> str:
        await asyncio.sleep(0.01)
        return run.output_text

    scorer = (
        create_scorer(id="stateless", score_range=(0, 50))
        .preprocess(slow_pre)
        .generate_score(lambda results, **_: float(results.preprocess_step_result))
    )

    async def main() -> list[float | None]:
        results = await asyncio.gather(*(scorer.run(output=str(i)) for i in range(50)))
        return [r.raw_score for r in results]

    assert asyncio.run(main()) == [float(i) for i in range(50)]


def test_result_serialises_to_json() -> None:
    scorer = create_scorer(id="json").preprocess(lambda **_: {"k": [1, 2]}).generate_score(lambda **_: 1)
    run = create_agent_test_run(
        input_messages=["hi"], output=[create_test_message("hello", role="assistant")]
    )
    data = scorer.run_sync(run).model_dump(mode="json")
    assert data["preprocess_step_result"] == {"k": [1, 2]}
    assert data["output"][0]["content"] == "hello"
    assert data["cost_usd"] is None and data["prompt_tokens"] == 0
