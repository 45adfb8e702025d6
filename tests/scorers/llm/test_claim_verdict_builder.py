"""build_claim_verdict_scorer: extract items, judge each, score with the formula, explain, against a
scripted judge (a scorer of its own, so the builder is tested apart from the prebuilt ones)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel

from agentevals import Run, Scorer
from agentevals.scorers.llm._claim_verdicts import build_claim_verdict_scorer
from agentevals.steps import PromptStep, StepResults
from agentevals.testing import FakeJudgeServer


class Greetings(BaseModel):
    greetings: list[str]


class Verdict(BaseModel):
    greeting: str
    verdict: Literal["warm", "cold"]


class Verdicts(BaseModel):
    verdicts: list[Verdict]


def warm_share(greetings: Sequence[str], verdicts: Sequence[Verdict], scale: float) -> float:
    """Warm greetings per greeting, halved: a formula no prebuilt scorer has."""
    return 0.0 if not greetings else scale * sum(v.verdict == "warm" for v in verdicts) / len(greetings) / 2


def _scorer(
    judge: Any, *, extract: bool = True, nothing_to_judge: str | None = "it greets nobody."
) -> Scorer:
    def reason_prompt(run: Run, results: StepResults, score: float) -> str:
        return f"Explain {score} for {len(results.analyze_step_result.verdicts)} verdicts"

    return build_claim_verdict_scorer(
        id="warmth",
        name="Warmth",
        description="Share of warm greetings",
        model=judge,
        instructions="You judge greetings.",
        scale=4,
        extract=PromptStep("List the greetings", lambda run: f"Greetings in: {run.output_text}", Greetings)
        if extract
        else None,
        check=PromptStep("Judge each greeting", lambda run: "Judge them", Verdicts),
        items=(
            (lambda run, results: results.preprocess_step_result.greetings)
            if extract
            else (lambda run, results: [v.greeting for v in results.analyze_step_result.verdicts])
        ),
        verdicts=lambda results: results.analyze_step_result.verdicts,
        formula=warm_share,
        reason_prompt=reason_prompt,
        nothing_to_judge=nothing_to_judge,
    )


def _verdicts(*labels: str) -> dict[str, Any]:
    return {"verdicts": [{"greeting": f"g{i}", "verdict": v} for i, v in enumerate(labels)]}


async def test_the_formula_scores_the_judged_items_on_the_scale(judge_server: FakeJudgeServer) -> None:
    judge_server.push({"greetings": ["g0", "g1"]}, _verdicts("warm", "cold"), "Half warm.")
    scorer = _scorer(judge_server.judge())
    result = await scorer.run(input="q", output="Hi! Go away.")
    assert result.raw_score == 1.0 and result.score == 0.25  # 4 × 1/2 / 2, rescaled from [0, 4]
    assert result.reason == "Half warm."
    prompts = (result.preprocess_prompt, result.analyze_prompt, result.generate_reason_prompt)
    assert prompts == ("Greetings in: Hi! Go away.", "Judge them", "Explain 1.0 for 2 verdicts")
    assert judge_server.requests[0].system.startswith("You judge greetings.")
    assert (scorer.id, scorer.name, scorer.type, scorer.score_range) == ("warmth", "Warmth", "agent", (0, 4))
    assert [s.name for s in scorer.steps] == ["preprocess", "analyze", "generate_score", "generate_reason"]


async def test_nothing_to_judge_gets_the_fixed_reason_without_a_judge_call(
    judge_server: FakeJudgeServer,
) -> None:
    judge_server.push({"greetings": []}, _verdicts())
    result = await _scorer(judge_server.judge()).run(input="q", output="")
    assert result.score == 0.0 and result.reason == "The score is 0.0 because it greets nobody."
    assert len(judge_server.requests) == 2 and result.generate_reason_prompt is None


async def test_without_a_fixed_sentence_the_judge_explains_an_empty_list(
    judge_server: FakeJudgeServer,
) -> None:
    judge_server.push({"greetings": []}, _verdicts(), "Nothing to judge.")
    result = await _scorer(judge_server.judge(), nothing_to_judge=None).run(input="q", output="")
    assert result.reason == "Nothing to judge." and len(judge_server.requests) == 3


async def test_without_extraction_the_judge_lists_the_items_as_it_judges_them(
    judge_server: FakeJudgeServer,
) -> None:
    judge_server.push(_verdicts("warm", "warm", "warm", "cold"), "Mostly warm.")
    scorer = _scorer(judge_server.judge(), extract=False)
    result = await scorer.run(input="q", output="Hi. Hello. Hey. Bye.")
    assert result.raw_score == 1.5  # 4 × 3/4 / 2
    assert [s.name for s in scorer.steps] == ["analyze", "generate_score", "generate_reason"]
