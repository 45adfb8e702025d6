"""Faithfulness: share of the output's claims supported by the context."""

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
    query_text,
    reason_step,
    resolve_context,
    run_hook,
    scaled,
    static_context,
)

FAITHFULNESS_INSTRUCTIONS = (
    "You verify claims against a given context. A claim is supported only if the context states or "
    "directly implies it; you never use outside knowledge."
)


@dataclass(frozen=True, kw_only=True)
class FaithfulnessOptions:
    """``context`` (static documents), ``get_context(run)`` (computed per run; wins), ``scale``."""

    context: Sequence[str] | None = None
    get_context: Callable[..., Any] | None = None
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


def create_faithfulness_scorer(
    model: str | Judge,
    options: FaithfulnessOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """Share of the output's claims supported by the context, in [0, scale] (higher is better).

    Context comes from ``get_context(run)``, else ``context``, else the run itself: ``run.context``
    (retrieved documents captured by an integration) or, failing that, the run's tool results, so live
    judges get context too. No context at all skips the run (``no_context``). Verdicts: yes (supported), no
    (contradicted), unsure (not in the context). An output without claims scores 0.

    >>> create_faithfulness_scorer("openai/gpt-4o-mini", context=["Paris is in France."]).id
    'faithfulness'
    """
    opts = merge_options(FaithfulnessOptions, options, option_kwargs)
    judge = make_judge(model, FAITHFULNESS_INSTRUCTIONS)
    extractor = run_hook(opts.get_context, "get_context")

    async def context_of(run: Run, results: StepResults) -> list[str]:
        found = await resolve_context(run, extractor=extractor, static=opts.context)
        return need_context("faithfulness", found) if results.preprocess_step_result.claims else found

    async def verdicts_prompt(run: Run, results: StepResults) -> str:
        labels = (
            '- "yes": the context supports the claim.\n- "no": the context contradicts the claim.\n'
            '- "unsure": the context neither supports nor contradicts it (also for speculative claims).'
        )
        return verdict_prompt(
            results.preprocess_step_result.claims, await context_of(run, results), labels, "claim"
        )

    def score(results: StepResults) -> float:
        claims, verdicts = results.preprocess_step_result.claims, results.analyze_step_result.verdicts
        verdicts = expect_count(verdicts, len(claims), what="verdicts", per="claims")
        if not claims:
            return 0.0
        return scaled(sum(v.verdict == "yes" for v in verdicts) / len(claims), opts.scale)

    def reason_prompt(run: Run, results: StepResults, score: float) -> str:
        # the verdicts' reasons cite the context, so the (possibly costly) get_context runs only once
        lines = [f"- [{v.verdict}] {v.claim}: {v.reason}" for v in results.analyze_step_result.verdicts]
        return f"""Explain in two or three sentences why the output's faithfulness score is {score} (out of
{opts.scale}), naming unsupported or contradicted claims. Start with "The score is {score} because".

Question: {query_text(run)}
Verdicts:
{chr(10).join(lines)}"""

    def fixed(run: Run, results: StepResults, score: float) -> str | None:
        if results.preprocess_step_result.claims:
            return None
        return f"The score is {score} because the output makes no claims to verify."

    return (
        create_scorer(
            id="faithfulness",
            name="Faithfulness",
            description="Share of the output's claims supported by the context",
            judge=judge,
            score_range=(0, opts.scale),
            type="agent",
        )
        .preprocess(PromptStep("Extract the output's claims", claims_prompt, Claims))
        .analyze(PromptStep("Check each claim against the context", verdicts_prompt, FaithfulnessVerdicts))
        .generate_score(score)
        .generate_reason(reason_step(judge, reason_prompt, fixed))
    )
