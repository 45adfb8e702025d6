"""Prompt alignment (user, system, both) against scripted judge replies."""

from __future__ import annotations

from typing import Any

import pytest

from agentevals import ScorerError
from agentevals.scorers.llm import create_prompt_alignment_scorer
from agentevals.scorers.utils import create_agent_test_run, create_test_message
from agentevals.testing import FakeJudgeServer


def alignment(intent: float, requirements: float, completeness: float, fit: float) -> dict[str, Any]:
    return {
        "intent_alignment": {"score": intent, "primary_intent": "i", "is_addressed": True, "reasoning": "r"},
        "requirements_fulfillment": {
            "requirements": [{"requirement": "use bullets", "is_fulfilled": False, "reasoning": "r"}],
            "overall_score": requirements,
        },
        "completeness": {"score": completeness, "missing_elements": ["m"], "reasoning": "r"},
        "response_appropriateness": {
            "score": fit,
            "format_alignment": True,
            "tone_alignment": True,
            "reasoning": "r",
        },
        "overall_assessment": "overall",
    }


def run(system: bool = True, user: bool = True, response: str = "Here are 3 tips.") -> Any:
    return create_agent_test_run(
        input_messages=["Give me 3 tips in bullets."] if user else [],
        system_messages=["Always answer in French."] if system else [],
        remembered_messages=["Earlier question"],
        output=[create_test_message(response, role="assistant")] if response else [],
    )


@pytest.mark.parametrize(
    ("mode", "parts", "expected"),
    [
        ("user", (1, 1, 1, 1), 1.0),
        ("user", (0, 0, 0, 0), 0.0),
        ("user", (1, 0.5, 0.5, 0), 0.65),  # 0.4 + 0.15 + 0.1
        ("system", (1, 0.5, 0.5, 0), 0.6),  # 0.35 + 0.175 + 0.075
    ],
)
async def test_single_mode_formula(
    judge_server: FakeJudgeServer, mode: str, parts: tuple[float, ...], expected: float
) -> None:
    judge_server.push(alignment(*parts), "reason")
    scorer = create_prompt_alignment_scorer(judge_server.judge(), evaluation_mode=mode)
    result = await scorer.run(run())
    assert result.score == expected and result.reason == "reason"
    assert ("Always answer in French." in result.analyze_prompt) == (mode == "system")  # type: ignore[operator]


async def test_both_mode_scores_system_prompt_separately(judge_server: FakeJudgeServer) -> None:
    judge_server.push(
        {"user_alignment": alignment(1, 1, 1, 1), "system_alignment": alignment(0, 0, 0, 0)},
        "Follows the request but ignores the system prompt's language rule.",
    )
    result = await create_prompt_alignment_scorer(judge_server.judge(), scale=10).run(run())
    assert result.raw_score == 7.0  # 0.7 × 1 + 0.3 × 0, scaled
    assert result.analyze_step_result.system_alignment.intent_alignment.score == 0
    prompt = result.analyze_prompt or ""
    assert "Always answer in French." in prompt and "Give me 3 tips" in prompt
    assert "user: Earlier question" in prompt and "Here are 3 tips." in prompt
    assert '"system_alignment"' in (result.generate_reason_prompt or "")


async def test_out_of_range_score_is_retried(judge_server: FakeJudgeServer) -> None:
    judge_server.push(alignment(1.5, 1, 1, 1), alignment(1, 1, 1, 1), "r")
    result = await create_prompt_alignment_scorer(judge_server.judge(), evaluation_mode="user").run(run())
    assert result.score == 1.0 and result.judge_calls[0].attempts == 2


@pytest.mark.parametrize(
    ("mode", "kwargs", "message"),
    [
        ("both", {"system": False}, "Both user and system prompts are required"),
        ("user", {"user": False}, "User prompt is required"),
        ("system", {"system": False}, "System prompt is required"),
        ("user", {"response": ""}, "Agent response is required"),
    ],
)
async def test_missing_inputs(
    judge_server: FakeJudgeServer, mode: str, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ScorerError, match=message):
        await create_prompt_alignment_scorer(judge_server.judge(), evaluation_mode=mode).run(run(**kwargs))
    assert judge_server.requests == []


def test_invalid_mode() -> None:
    with pytest.raises(ValueError, match="evaluation_mode must be"):
        create_prompt_alignment_scorer("openai/gpt-4o-mini", {"evaluation_mode": "all"})
