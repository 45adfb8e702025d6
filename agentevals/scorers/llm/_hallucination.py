"""Hallucination: share of the output's claims that contradict or are unsupported by the context."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from agentevals._model._run import Run
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep, StepResults
from agentevals.scorers.llm._claims import claims_prompt, need_context, verdict_prompt
from agentevals.scorers.llm._common import (
    Claims,
    check_scale,
    expect_count,
    make_judge,
    merge_options,
    numbered,
    query_text,
    reason_step,
    resolve_context,
    run_hook,
    scaled,
    static_context,
)

HALLUCINATION_INSTRUCTIONS = (
    "You detect hallucinations: claims that contradict the given context or are not supported by it. "
    "Approximations of numbers and dates that the context supports are fine; subjective praise and "
    "speculation about facts the context does not contain count as hallucinations."
)


@dataclass(frozen=True, kw_only=True)
class HallucinationOptions:
    """``context`` (static), ``get_context(run=, results=, score=, step=)`` (wins), ``scale``."""

    context: Sequence[str] | None = None
    get_context: Callable[..., Any] | None = None
    scale: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "context", static_context("hallucination", self.context))
        check_scale("hallucination", self.scale)


class HallucinationVerdict(BaseModel):
    statement: str
    verdict: Literal["yes", "no"]
    reason: str


class HallucinationVerdicts(BaseModel):
    verdicts: list[HallucinationVerdict]


def create_hallucination_scorer(
    model: str | Judge,
    options: HallucinationOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """Share of the output's claims that are hallucinated, in [0, scale] (lower is better).

    Context: ``get_context(run=, results=, score=, step=)`` when given (``step`` is ``"analyze"`` or
    ``"generate_reason"``), else ``context``, else the run's own ``run.context`` or tool results. No
    context at all skips the run (``no_context``). Empty output has no claims and scores 0.

    >>> scorer = create_hallucination_scorer("openai/gpt-4o-mini", context=[
    ...     "The first iPhone was announced on January 9, 2007."])
    >>> scorer.id
    'hallucination'
    """
    opts = merge_options(HallucinationOptions, options, option_kwargs)
    judge = make_judge(model, HALLUCINATION_INSTRUCTIONS)
    hook = run_hook(opts.get_context, "get_context")

    async def context_of(run: Run, results: StepResults, step: str, score: float | None) -> list[str]:
        found = await resolve_context(
            run, extractor=hook, static=opts.context, results=results, score=score, step=step
        )
        return need_context("hallucination", found) if results.preprocess_step_result.claims else found

    async def verdicts_prompt(run: Run, results: StepResults) -> str:
        labels = (
            '- "yes": a hallucination: the claim contradicts the context, or the context does not\n'
            "  support it (including subjective claims and speculation about facts not in the context).\n"
            '- "no": the context supports the claim (reasonable approximations count as supported;\n'
            "  speculative wording about facts that are in the context is fine)."
        )
        context = await context_of(run, results, "analyze", None)
        return verdict_prompt(results.preprocess_step_result.claims, context, labels, "statement")

    def score(results: StepResults) -> float:
        claims, verdicts = results.preprocess_step_result.claims, results.analyze_step_result.verdicts
        verdicts = expect_count(verdicts, len(claims), what="verdicts", per="claims")
        if not claims:
            return 0.0
        return scaled(sum(v.verdict == "yes" for v in verdicts) / len(claims), opts.scale)

    async def reason_prompt(run: Run, results: StepResults, score: float) -> str:
        lines = [f"- [{v.verdict}] {v.statement}: {v.reason}" for v in results.analyze_step_result.verdicts]
        context = await context_of(run, results, "generate_reason", score)
        return f"""Explain in two or three sentences why the output's hallucination score is {score} (out of
{opts.scale}; higher means more hallucinated), naming the hallucinated claims. Start with "The score
is {score} because".

Question: {query_text(run)}
Context:
{numbered(context)}
Verdicts ("yes" = hallucination):
{chr(10).join(lines)}"""

    def fixed(run: Run, results: StepResults, score: float) -> str | None:
        if results.preprocess_step_result.claims:
            return None
        return f"The score is {score} because the output makes no claims, so nothing is hallucinated."

    return (
        create_scorer(
            id="hallucination",
            name="Hallucination",
            description="Share of the output's claims not supported by the context",
            judge=judge,
            score_range=(0, opts.scale),
            type="agent",
        )
        .preprocess(PromptStep("Extract the output's claims", claims_prompt, Claims))
        .analyze(PromptStep("Find hallucinated claims", verdicts_prompt, HallucinationVerdicts))
        .generate_score(score)
        .generate_reason(reason_step(judge, reason_prompt, fixed))
    )
