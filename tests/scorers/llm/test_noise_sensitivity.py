"""Noise sensitivity against scripted judge replies."""

from __future__ import annotations

from typing import Any

import pytest

from agentevals import ScorerError
from agentevals.scorers.llm import NoiseSensitivityOptions, create_noise_sensitivity_scorer
from agentevals.testing import FakeJudgeServer, Reply

OPTS = {
    "baseline_response": "Paris is the capital of France.",
    "noisy_query": "Capital of France? Ignore: cats!",
}


def analysis(robustness: float, *levels: str, issues: int = 0) -> dict[str, Any]:
    return {
        "dimensions": [
            {"dimension": f"d{i}", "impact_level": lv, "specific_changes": "c", "noise_influence": "n"}
            for i, lv in enumerate(levels)
        ],
        "overall_assessment": "overall",
        "major_issues": [f"issue{i}" for i in range(issues)],
        "robustness_score": robustness,
    }


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (analysis(1.0, "none", "none"), 1.0),
        (analysis(0.0, "severe"), 0.0),
        (analysis(0.9, "minimal", "none"), 0.9),  # mean 0.925 within the 0.2 threshold: judge score kept
        (analysis(0.9, "moderate", "significant"), 0.45),  # mean 0.45 differs by > 0.2: capped
        (analysis(0.9, "none", issues=2), 0.7),  # two major issues × 0.1
        (analysis(1.0, issues=5), 0.7),  # penalty capped at 0.3; no dimensions
    ],
)
async def test_formula(judge_server: FakeJudgeServer, reply: dict[str, Any], expected: float) -> None:
    judge_server.push(reply, "reason")
    result = await create_noise_sensitivity_scorer(judge_server.judge(), OPTS).run(
        input="What is the capital of France?", output="Paris, and cats are nice."
    )
    assert result.score == expected and result.reason == "reason"


async def test_fields_prompts_nested_scoring_and_scale(judge_server: FakeJudgeServer) -> None:
    judge_server.push(analysis(0.9, "moderate"), "Noise made it drift.")
    scorer = create_noise_sensitivity_scorer(
        judge_server.judge(),
        {**OPTS, "noise_type": "distraction", "scoring": {"impactWeights": {"moderate": 0.5}}},
        scale=10,
    )
    result = await scorer.run(input="What is the capital of France?", output="Paris; cats.")
    assert result.raw_score == 5.0
    assert result.analyze_step_result.dimensions[0].impact_level == "moderate"
    prompt = result.analyze_prompt or ""
    assert (
        "Ignore: cats!" in prompt and "Paris is the capital of France." in prompt and "distraction" in prompt
    )
    assert "d0: moderate" in (result.generate_reason_prompt or "")


async def test_errors_and_retry(judge_server: FakeJudgeServer) -> None:
    with pytest.raises(ValueError, match="Both baseline_response and noisy_query are required"):
        create_noise_sensitivity_scorer("openai/gpt-4o-mini", baseline_response="x")
    with pytest.raises(ValueError, match="unknown impact levels"):
        NoiseSensitivityOptions(**OPTS, impact_weights={"huge": 0.1})
    with pytest.raises(ScorerError, match="noisy query"):
        await create_noise_sensitivity_scorer(judge_server.judge(), OPTS).run(input="q", output="")
    judge_server.push(analysis(1.5), Reply.malformed(), analysis(1.0), "r")
    result = await create_noise_sensitivity_scorer(judge_server.judge(), OPTS).run(input="q", output="a")
    assert result.score == 1.0 and result.judge_calls[0].attempts == 3


async def test_a_local_server_is_sent_the_impact_levels_five_dimensions_and_a_bounded_score(
    judge_server: FakeJudgeServer,
) -> None:
    levels = ["none", "minimal", "moderate", "significant", "severe"]
    judge_server.push(analysis(0.9, *["none"] * 5), "r")
    judge = judge_server.judge(model="openai/smollm2", api_key="none")  # llama.cpp's server, as configured
    await create_noise_sensitivity_scorer(judge, OPTS).run(input="q", output="a")
    sent = judge_server.requests[0].body["response_format"]
    assert sent["type"] == "json_object"
    schema = sent["schema"]
    assert schema["$defs"]["DimensionImpact"]["properties"]["impact_level"]["enum"] == levels
    dimensions, issues = schema["properties"]["dimensions"], schema["properties"]["major_issues"]
    assert (dimensions["minItems"], dimensions["maxItems"], issues["maxItems"]) == (5, 5, 10)
    score = schema["properties"]["robustness_score"]
    assert (score["minimum"], score["maximum"], score["enum"][:3], len(score["enum"])) == (
        0,
        1,
        [0, 0.01, 0.02],
        101,
    )
