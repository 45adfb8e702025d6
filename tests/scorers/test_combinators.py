from __future__ import annotations

import pytest

from agentevals import create_scorer
from agentevals.scorers import (
    all_of,
    any_of,
    create_exact_match_scorer,
    create_factuality_scorer,
    create_includes_scorer,
    weighted,
)
from agentevals.testing import FakeJudgeServer


def test_seed_all_of() -> None:
    strict = all_of(create_exact_match_scorer(), create_includes_scorer())
    assert strict.run_sync(input="What is 2+2?", output="4", ground_truth="4").score == 1.0
    failing = strict.run_sync(output="The answer is 4", ground_truth="4")
    assert failing.score == 0.0
    assert failing.reason == "Expected '4', got 'The answer is 4'"
    assert [r["scorer_id"] for r in failing.analyze_step_result["members"]] == ["exact_match", "includes"]
    assert failing.analyze_step_result["skipped"] == []


def test_seed_any_of() -> None:
    lenient = any_of(create_exact_match_scorer(), create_includes_scorer())
    result = lenient.run_sync(
        input="What is the capital of France?", output="The capital is Paris.", ground_truth="Paris"
    )
    assert result.score == 1.0 and result.reason is None  # the best scorer (includes) has no complaint


def test_seed_weighted_with_factuality() -> None:
    with FakeJudgeServer([{"relation": "same", "reason": "Both say 4."}]) as server:
        balanced = weighted(
            {
                "accuracy": {"scorer": create_exact_match_scorer(), "weight": 2},
                "grounding": (create_factuality_scorer(server.judge()), 1),
            }
        )
        result = balanced.run_sync(input="What is 2+2?", output="4", ground_truth="4")
    assert result.score == 1.0
    assert result.reason == "accuracy: 1.00 (w=2), grounding: 1.00 (w=1)"
    assert [c.step for c in result.judge_calls] == ["analyze"]  # the sub-scorer's judge call is counted


def test_weighted_mean() -> None:
    half = create_scorer(id="half").generate_score(lambda **_: 0.5)
    zero = create_scorer(id="zero").generate_score(lambda **_: 0.0)
    assert weighted({"a": (half, 3), "b": (zero, 1)}).run_sync(output="x").score == pytest.approx(0.375)


def test_combinator_validation() -> None:
    with pytest.raises(ValueError, match="at least one"):
        all_of()
    with pytest.raises(TypeError, match="takes Scorer objects"):
        any_of(lambda: 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="weight of 'a' must be"):
        weighted({"a": (create_exact_match_scorer(), 0)})
    with pytest.raises(ValueError, match="at least one"):
        weighted({})


async def test_sub_scorers_run_concurrently() -> None:
    import asyncio

    started: list[str] = []

    def slow(name: str) -> object:
        async def score(**_: object) -> float:
            started.append(name)
            await asyncio.sleep(0.05)
            assert len(started) == 2, "both sub-scorers must have started before either finishes"
            return 1.0

        return create_scorer(id=name).generate_score(score)

    assert (await all_of(slow("a"), slow("b")).run(output="x")).score == 1.0


async def test_factuality_relations_and_prompt(judge_server: FakeJudgeServer) -> None:
    judge_server.push(
        {"relation": "subset", "reason": "Only mentions Paris."},
        {"relation": "conflict", "reason": "Says Lyon."},
        '```json\n{"relation": "superset", "reason": "More detail."}\n```',
    )
    scorer = create_factuality_scorer(judge_server.judge(), scale=10)
    run = {
        "input": "What is the capital of France?",
        "output": "Paris",
        "ground_truth": "Paris, on the Seine",
    }
    assert (await scorer.run(**run)).raw_score == pytest.approx(4.0)
    assert (await scorer.run(**run)).score == 0.0
    result = await scorer.run(**run)
    assert result.raw_score == pytest.approx(6.0) and result.score == pytest.approx(0.6)
    assert result.reason == "superset: More detail."
    prompt = result.analyze_prompt or ""
    assert "Reference answer (expert):\n<<<DATA " in prompt and "\nParis, on the Seine\n<<<END " in prompt
    assert judge_server.requests[0].system.startswith("You check answers")


def test_factuality_needs_ground_truth() -> None:
    from agentevals import ScorerError

    with pytest.raises(ScorerError, match="ground_truth"):
        create_factuality_scorer("openai/gpt-4o-mini").run_sync(output="x")
