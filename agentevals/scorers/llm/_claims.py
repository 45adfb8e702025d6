"""Faithfulness and hallucination: the output's claims checked against context."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from agentevals._judge._judge import Judge
from agentevals._run import Run
from agentevals._scorer import Scorer, create_scorer
from agentevals._steps import PromptStep, StepResults
from agentevals.scorers.llm._common import (
    NO_CONTEXT_HINT,
    Claims,
    check_scale,
    context_extractor,
    expect_count,
    make_judge,
    merge_options,
    numbered,
    query_text,
    reason_step,
    resolve_context,
    response_text,
    scaled,
    static_context,
)

FAITHFULNESS_INSTRUCTIONS = (
    "You verify claims against a given context. A claim is supported only if the context states or "
    "directly implies it; you never use outside knowledge."
)
HALLUCINATION_INSTRUCTIONS = (
    "You detect hallucinations: claims that contradict the given context or are not supported by it. "
    "Approximations of numbers and dates that the context supports are fine; subjective praise and "
    "speculation about facts the context does not contain count as hallucinations."
)


def claims_prompt(run: Run) -> str:
    return f"""List every claim the text makes: each factual statement, and each speculative one
("might", "probably"), as a short standalone sentence. Opinions about style are not claims. An empty
text has no claims.

Text:
{response_text(run) or "(empty)"}

Return {{"claims": [...]}}."""


@dataclass(frozen=True, kw_only=True)
class FaithfulnessOptions:
    """``context`` (static documents), ``context_extractor(run)`` (wins), ``scale``."""

    context: Sequence[str] | None = None
    context_extractor: Callable[..., Any] | None = None
    scale: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "context", static_context("faithfulness", self.context))
        check_scale("faithfulness", self.scale)


class FaithfulnessVerdict(BaseModel):
    claim: str
    verdict: Literal["yes", "no", "unsure"]
    reason: str


class FaithfulnessVerdicts(BaseModel):
    verdicts: list[FaithfulnessVerdict]


def _verdict_prompt(claims: Sequence[str], context: Sequence[str], labels: str, what: str) -> str:
    return f"""Check each claim against the context only.
{labels}

Context:
{numbered(context)}

Claims:
{numbered(claims)}

Return {{"verdicts": [{{"{what}", "verdict", "reason"}}, ...]}} with exactly one verdict per claim, in
order ({len(claims)} verdicts)."""


def _need_context(name: str, context: list[str]) -> list[str]:
    if not context:
        raise ValueError(f"{name} has no context to check the output against: {NO_CONTEXT_HINT}")
    return context


def create_faithfulness_scorer(
    model: str | Judge,
    options: FaithfulnessOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """Share of the output's claims supported by the context, in [0, scale] (higher is better).

    Context comes from ``context_extractor(run)``, else ``context``, else the run itself: ``run.context``
    (retrieved documents captured by an integration) or, failing that, the run's tool results, so live
    judges get context too. No context at all is an error. Verdicts: yes (supported), no
    (contradicted), unsure (not in the context). An output without claims scores 0.

    >>> create_faithfulness_scorer("openai/gpt-4o-mini", context=["Paris is in France."]).id
    'faithfulness-scorer'
    """
    opts = merge_options(FaithfulnessOptions, options, option_kwargs)
    judge = make_judge(model, FAITHFULNESS_INSTRUCTIONS)
    extractor = context_extractor(opts.context_extractor, "context_extractor")

    async def context_of(run: Run, results: StepResults) -> list[str]:
        found = await resolve_context(run, extractor=extractor, static=opts.context)
        return _need_context("faithfulness", found) if results.preprocess_step_result.claims else found

    async def verdicts_prompt(run: Run, results: StepResults) -> str:
        labels = (
            '- "yes": the context supports the claim.\n- "no": the context contradicts the claim.\n'
            '- "unsure": the context neither supports nor contradicts it (also for speculative claims).'
        )
        return _verdict_prompt(
            results.preprocess_step_result.claims, await context_of(run, results), labels, "claim"
        )

    def score(results: StepResults) -> float:
        claims, verdicts = results.preprocess_step_result.claims, results.analyze_step_result.verdicts
        expect_count(len(verdicts), len(claims), what="verdicts", per="claims")
        if not claims:
            return 0.0
        return scaled(sum(v.verdict == "yes" for v in verdicts) / len(claims), opts.scale)

    async def reason_prompt(run: Run, results: StepResults, score: float) -> str:
        lines = [f"- [{v.verdict}] {v.claim}: {v.reason}" for v in results.analyze_step_result.verdicts]
        return f"""Explain in two or three sentences why the output's faithfulness score is {score} (out of
{opts.scale}), naming unsupported or contradicted claims. Start with "The score is {score} because".

Context:
{numbered(await context_of(run, results))}
Verdicts:
{chr(10).join(lines)}"""

    def fixed(run: Run, results: StepResults, score: float) -> str | None:
        if results.preprocess_step_result.claims:
            return None
        return f"The score is {score} because the output makes no claims to verify."

    return (
        create_scorer(
            id="faithfulness-scorer",
            name="Faithfulness",
            description="Share of the output's claims supported by the context",
            judge=judge,
            type="agent",
        )
        .preprocess(PromptStep("Extract the output's claims", claims_prompt, Claims))
        .analyze(PromptStep("Check each claim against the context", verdicts_prompt, FaithfulnessVerdicts))
        .generate_score(score)
        .generate_reason(reason_step(judge, reason_prompt, fixed))
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
    context at all is an error. Empty output has no claims and scores 0.

    >>> scorer = create_hallucination_scorer("openai/gpt-4o-mini", context=[
    ...     "The first iPhone was announced on January 9, 2007."])
    >>> scorer.id
    'hallucination-scorer'
    """
    opts = merge_options(HallucinationOptions, options, option_kwargs)
    judge = make_judge(model, HALLUCINATION_INSTRUCTIONS)
    hook = context_extractor(opts.get_context, "get_context")

    async def context_of(run: Run, results: StepResults, step: str, score: float | None) -> list[str]:
        found = await resolve_context(
            run, extractor=hook, static=opts.context, results=results, score=score, step=step
        )
        return _need_context("hallucination", found) if results.preprocess_step_result.claims else found

    async def verdicts_prompt(run: Run, results: StepResults) -> str:
        labels = (
            '- "yes": a hallucination: the claim contradicts the context, or the context does not\n'
            "  support it (including subjective claims and speculation about facts not in the context).\n"
            '- "no": the context supports the claim (reasonable approximations count as supported;\n'
            "  speculative wording about facts that are in the context is fine)."
        )
        context = await context_of(run, results, "analyze", None)
        return _verdict_prompt(results.preprocess_step_result.claims, context, labels, "statement")

    def score(results: StepResults) -> float:
        claims, verdicts = results.preprocess_step_result.claims, results.analyze_step_result.verdicts
        expect_count(len(verdicts), len(claims), what="verdicts", per="claims")
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
            id="hallucination-scorer",
            name="Hallucination",
            description="Share of the output's claims not supported by the context",
            judge=judge,
            type="agent",
        )
        .preprocess(PromptStep("Extract the output's claims", claims_prompt, Claims))
        .analyze(PromptStep("Find hallucinated claims", verdicts_prompt, HallucinationVerdicts))
        .generate_score(score)
        .generate_reason(reason_step(judge, reason_prompt, fixed))
    )
