"""Hallucination: share of the output's claims that contradict or are unsupported by the context."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from agentevals._model._run import Run
from agentevals._scoring._judge._fence import fenced
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer
from agentevals._scoring._steps import PromptStep, StepResults
from agentevals.scorers.llm._claim_verdicts import YES_COUNTS, build_claim_verdict_scorer, verdict_share
from agentevals.scorers.llm._claims import (
    claims_prompt,
    claims_schema,
    need_context,
    one_verdict_per_claim,
    verdict_prompt,
)
from agentevals.scorers.llm._common import (
    check_scale,
    merge_options,
    normalized_label,
    numbered,
    query_text,
    resolve_context,
    run_hook,
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
    reason: str = ""

    _label = field_validator("verdict", mode="before")(normalized_label)


class HallucinationVerdicts(BaseModel):
    verdicts: list[HallucinationVerdict]


_LABELS = (
    '- "yes": a hallucination: the claim contradicts the context, or the context does not\n'
    "  support it (including subjective claims and speculation about facts not in the context).\n"
    '- "no": the context supports the claim (reasonable approximations count as supported;\n'
    "  speculative wording about facts that are in the context is fine)."
)


def hallucination_score(
    claims: Sequence[str], verdicts: Sequence[HallucinationVerdict], scale: float
) -> float:
    """Share of the claims that are hallucinated ("yes"), × ``scale``.

    No claims (an empty output) score 0; fewer verdicts than claims is a ``ValueError``.

    >>> yes, no = (HallucinationVerdict(statement="s", verdict=v, reason="") for v in ("yes", "no"))
    >>> hallucination_score(["s1", "s2", "s3", "s4"], [yes, no, no, no], 1)
    0.25
    """
    return verdict_share(claims, [v.verdict for v in verdicts], YES_COUNTS, scale)


def _reason_prompt(
    question: str,
    context: Sequence[str],
    verdicts: Sequence[HallucinationVerdict],
    score: float,
    scale: float,
) -> str:
    lines = [f"- [{v.verdict}] {v.statement}: {v.reason}" for v in verdicts]
    return fenced(
        lambda data: (
            f"""Explain in two or three sentences why the output's hallucination score is {score}
(out of {scale}; higher means more hallucinated), naming the hallucinated claims. Start with "The score
is {score} because".

Question:
{data(question)}

Context:
{data(numbered(context))}

Verdicts ("yes" = hallucination):
{data(chr(10).join(lines))}"""
        )
    )


def create_hallucination_scorer(
    model: str | Judge,
    options: HallucinationOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """Share of the output's claims that are hallucinated, in [0, scale] (lower is better).

    Context: ``get_context(run=, results=, score=, step=)`` when given (``step`` is ``"analyze"`` or
    ``"generate_reason"``), else ``context``, else the run's own ``run.context`` or tool results. No
    context at all skips the run (``no_context``). An empty output has no claims and scores 0; the judge
    must extract at least one claim from a non-empty output, and give one verdict per claim.

    >>> scorer = create_hallucination_scorer("openai/gpt-4o-mini", context=[
    ...     "The first iPhone was announced on January 9, 2007."])
    >>> scorer.id
    'hallucination'
    """
    opts = merge_options(HallucinationOptions, options, option_kwargs)
    hook = run_hook(opts.get_context, "get_context")

    async def context_of(run: Run, results: StepResults, step: str, score: float | None) -> list[str]:
        found = await resolve_context(
            run, extractor=hook, static=opts.context, results=results, score=score, step=step
        )
        return need_context("hallucination", found) if results.preprocess_step_result.claims else found

    async def verdicts_prompt(run: Run, results: StepResults) -> str:
        claims = results.preprocess_step_result.claims
        context = await context_of(run, results, "analyze", None)
        return verdict_prompt(claims, context, _LABELS, "statement")

    async def reason_prompt(run: Run, results: StepResults, score: float) -> str:
        context = await context_of(run, results, "generate_reason", score)
        verdicts = results.analyze_step_result.verdicts
        return _reason_prompt(query_text(run), context, verdicts, score, opts.scale)

    return build_claim_verdict_scorer(
        id="hallucination",
        name="Hallucination",
        description="Share of the output's claims not supported by the context",
        model=model,
        instructions=HALLUCINATION_INSTRUCTIONS,
        scale=opts.scale,
        extract=PromptStep("Extract the output's claims", claims_prompt, claims_schema),
        check=PromptStep(
            "Find hallucinated claims", verdicts_prompt, one_verdict_per_claim(HallucinationVerdicts)
        ),
        items=lambda run, results: results.preprocess_step_result.claims,
        verdicts=lambda results: results.analyze_step_result.verdicts,
        formula=hallucination_score,
        reason_prompt=reason_prompt,
        nothing_to_judge="the output is empty and makes no claims, so nothing is hallucinated.",
    )
