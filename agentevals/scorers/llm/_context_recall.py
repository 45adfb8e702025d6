"""Context recall: share of the expected answer's claims that the context supports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep, StepResults
from agentevals.scorers.llm._common import (
    Claims,
    as_text,
    expect_count,
    make_judge,
    merge_options,
    numbered,
    query_text,
    reason_step,
    scaled,
)
from agentevals.scorers.llm._context_options import ContextOptions, required_context

INSTRUCTIONS = (
    "You check whether retrieved context contains the information of a reference answer. A claim is "
    "attributable when the context states or directly implies it; you never use outside knowledge."
)


@dataclass(frozen=True, kw_only=True)
class ContextRecallOptions(ContextOptions):
    pass


class RecallVerdict(BaseModel):
    claim: str
    verdict: Literal["yes", "no"]
    reason: str


class RecallVerdicts(BaseModel):
    verdicts: list[RecallVerdict]


def _ground_truth(run: Run) -> str:
    truth = "" if run.ground_truth is None else as_text(run.ground_truth).strip()
    if not truth:
        raise SkipRun(
            "context recall needs run.ground_truth (the reference answer) to extract claims from; add it "
            "to the run or dataset item",
            reason="no_ground_truth",
        )
    return truth


def _claims_prompt(run: Run) -> str:
    return f"""List the atomic claims of the reference answer: each separate fact as a short standalone
sentence.

Reference answer:
{_ground_truth(run)}

Return {{"claims": [...]}}."""


def create_context_recall_scorer(
    model: str | Judge,
    options: ContextRecallOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """Share of ``ground_truth``'s claims attributable to the context, in [0, scale].

    Needs ``run.ground_truth`` (the run is skipped otherwise, ``no_ground_truth``: never a silent 0). Context:
    ``get_context(run)`` (wins), ``context``, or the run's ``run.context`` / tool results; with none
    the run is skipped (``no_context``). A reference without claims scores 0.

    >>> create_context_recall_scorer("openai/gpt-4o-mini", context=["doc"]).id
    'context_recall'
    """
    opts = merge_options(ContextRecallOptions, options, option_kwargs)
    judge = make_judge(model, INSTRUCTIONS)
    extractor = opts.extractor()

    async def verdicts_prompt(run: Run, results: StepResults) -> str:
        context = await required_context(run, opts, extractor, "context recall")
        claims = results.preprocess_step_result.claims
        return f"""For each claim, decide whether the context supports it ("yes") or not ("no").

Context:
{numbered(context)}

Claims:
{numbered(claims)}

Return {{"verdicts": [{{"claim", "verdict", "reason"}}, ...]}} with exactly one verdict per claim, in
order ({len(claims)} verdicts)."""

    def score(results: StepResults) -> float:
        claims, verdicts = results.preprocess_step_result.claims, results.analyze_step_result.verdicts
        verdicts = expect_count(verdicts, len(claims), what="verdicts", per="claims")
        if not claims:
            return 0.0
        return scaled(sum(v.verdict == "yes" for v in verdicts) / len(claims), opts.scale)

    def reason_prompt(run: Run, results: StepResults, score: float) -> str:
        lines = [f"- [{v.verdict}] {v.claim}: {v.reason}" for v in results.analyze_step_result.verdicts]
        return f"""Explain in two or three sentences why the context recall score is {score} (out of
{opts.scale}), naming reference claims the context does not cover.

Question: {query_text(run)}
Verdicts ("yes" = the context supports the claim):
{chr(10).join(lines)}"""

    def fixed(run: Run, results: StepResults, score: float) -> str | None:
        if results.preprocess_step_result.claims:
            return None
        return f"The score is {score} because the reference answer contains no claims to look for."

    return (
        create_scorer(
            id="context_recall",
            name="Context Recall",
            description="Share of the reference answer's claims found in the context",
            judge=judge,
            score_range=(0, opts.scale),
            type="agent",
        )
        .preprocess(PromptStep("Extract the reference answer's claims", _claims_prompt, Claims))
        .analyze(PromptStep("Check each claim against the context", verdicts_prompt, RecallVerdicts))
        .generate_score(score)
        .generate_reason(reason_step(judge, reason_prompt, fixed))
    )
