"""Faithfulness: share of the output's claims supported by the context."""

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
    query_text,
    resolve_context,
    run_hook,
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
    reason: str = ""

    _label = field_validator("verdict", mode="before")(normalized_label)


class FaithfulnessVerdicts(BaseModel):
    verdicts: list[FaithfulnessVerdict]


_LABELS = (
    '- "yes": the context supports the claim.\n- "no": the context contradicts the claim.\n'
    '- "unsure": the context neither supports nor contradicts it (also for speculative claims).'
)


def faithfulness_score(claims: Sequence[str], verdicts: Sequence[FaithfulnessVerdict], scale: float) -> float:
    """Share of the claims the context supports ("yes"; "no" and "unsure" count 0), × ``scale``.

    No claims (an empty output) score 0; fewer verdicts than claims is a ``ValueError``.

    >>> yes, unsure = (FaithfulnessVerdict(claim="c", verdict=v, reason="") for v in ("yes", "unsure"))
    >>> faithfulness_score(["c1", "c2"], [yes, unsure], 4)
    2.0
    """
    return verdict_share(claims, [v.verdict for v in verdicts], YES_COUNTS, scale)


def _reason_prompt(question: str, verdicts: Sequence[FaithfulnessVerdict], score: float, scale: float) -> str:
    # the verdicts' reasons cite the context, so the (possibly costly) get_context runs only once
    lines = [f"- [{v.verdict}] {v.claim}: {v.reason}" for v in verdicts]
    return fenced(
        lambda data: (
            f"""Explain in two or three sentences why the output's faithfulness score is {score} (out of
{scale}), naming unsupported or contradicted claims. Start with "The score is {score} because".

Question:
{data(question)}

Verdicts:
{data(chr(10).join(lines))}"""
        )
    )


def create_faithfulness_scorer(
    model: str | Judge,
    options: FaithfulnessOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """Share of the output's claims supported by the context, in [0, scale] (higher is better).

    Context comes from ``get_context(run)``, else ``context``, else the run itself: ``run.context``
    (retrieved documents captured by an integration) or, failing that, the run's tool results, so live
    judges get context too. No context at all skips the run (``no_context``). Verdicts: yes (supported), no
    (contradicted), unsure (not in the context). An empty output has no claims and scores 0; the judge
    must extract at least one claim from a non-empty output, and give one verdict per claim.

    >>> create_faithfulness_scorer("openai/gpt-4o-mini", context=["Paris is in France."]).id
    'faithfulness'
    """
    opts = merge_options(FaithfulnessOptions, options, option_kwargs)
    extractor = run_hook(opts.get_context, "get_context")

    async def verdicts_prompt(run: Run, results: StepResults) -> str:
        claims = results.preprocess_step_result.claims
        found = await resolve_context(run, extractor=extractor, static=opts.context)
        return verdict_prompt(
            claims, need_context("faithfulness", found) if claims else found, _LABELS, "claim"
        )

    return build_claim_verdict_scorer(
        id="faithfulness",
        name="Faithfulness",
        description="Share of the output's claims supported by the context",
        model=model,
        instructions=FAITHFULNESS_INSTRUCTIONS,
        scale=opts.scale,
        extract=PromptStep("Extract the output's claims", claims_prompt, claims_schema),
        check=PromptStep(
            "Check each claim against the context",
            verdicts_prompt,
            one_verdict_per_claim(FaithfulnessVerdicts),
        ),
        items=lambda run, results: results.preprocess_step_result.claims,
        verdicts=lambda results: results.analyze_step_result.verdicts,
        formula=faithfulness_score,
        reason_prompt=lambda run, results, score: _reason_prompt(
            query_text(run), results.analyze_step_result.verdicts, score, opts.scale
        ),
        nothing_to_judge="the output is empty and makes no claims to verify.",
    )
