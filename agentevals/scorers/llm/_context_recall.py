"""Context recall: share of the expected answer's claims that the context supports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._item_counts import with_item_counts
from agentevals._scoring._judge._fence import fenced
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer
from agentevals._scoring._steps import PromptStep, StepResults
from agentevals.scorers.llm._claim_verdicts import YES_COUNTS, build_claim_verdict_scorer, verdict_share
from agentevals.scorers.llm._common import (
    Claims,
    as_text,
    extraction_count,
    merge_options,
    normalized_label,
    numbered,
    query_text,
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
    reason: str = ""

    _label = field_validator("verdict", mode="before")(normalized_label)


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
    truth = _ground_truth(run)
    return fenced(
        lambda data: (
            f"""List the atomic claims of the reference answer: each separate fact as a short
standalone sentence.

Reference answer:
{data(truth)}

Return {{"claims": [...]}}."""
        )
    )


def _verdicts_prompt(context: Sequence[str], claims: Sequence[str]) -> str:
    return fenced(
        lambda data: (
            f"""For each claim, decide whether the context supports it ("yes") or not ("no").

Context:
{data(numbered(context))}

Claims:
{data(numbered(claims))}

Return {{"verdicts": [{{"claim", "verdict", "reason"}}, ...]}} with exactly one verdict per claim, in
order ({len(claims)} verdicts)."""
        )
    )


def _claims_schema(run: Run) -> type[Claims]:
    """At least one claim from the reference answer (never empty: a run without one is skipped)."""
    return with_item_counts(Claims, claims=extraction_count(_ground_truth(run)))


def _verdicts_schema(results: StepResults) -> type[RecallVerdicts]:
    return with_item_counts(RecallVerdicts, verdicts=len(results.preprocess_step_result.claims))


def context_recall_score(claims: Sequence[str], verdicts: Sequence[RecallVerdict], scale: float) -> float:
    """Share of the reference answer's claims the context supports ("yes"), × ``scale``.

    No claims score 0; fewer verdicts than claims is a ``ValueError``.

    >>> yes, no = (RecallVerdict(claim="c", verdict=v, reason="") for v in ("yes", "no"))
    >>> context_recall_score(["c1", "c2", "c3"], [yes, yes, no], 1)
    0.67
    """
    return verdict_share(claims, [v.verdict for v in verdicts], YES_COUNTS, scale)


def _reason_prompt(question: str, verdicts: Sequence[RecallVerdict], score: float, scale: float) -> str:
    lines = [f"- [{v.verdict}] {v.claim}: {v.reason}" for v in verdicts]
    return fenced(
        lambda data: (
            f"""Explain in two or three sentences why the context recall score is {score} (out of
{scale}), naming reference claims the context does not cover.

Question:
{data(question)}

Verdicts ("yes" = the context supports the claim):
{data(chr(10).join(lines))}"""
        )
    )


def create_context_recall_scorer(
    model: str | Judge,
    options: ContextRecallOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """Share of ``ground_truth``'s claims attributable to the context, in [0, scale].

    Needs ``run.ground_truth`` (the run is skipped otherwise, ``no_ground_truth``: never a silent 0). Context:
    ``get_context(run)`` (wins), ``context``, or the run's ``run.context`` / tool results; with none
    the run is skipped (``no_context``). The judge must extract at least one claim from the reference
    answer, and give one verdict per claim.

    >>> create_context_recall_scorer("openai/gpt-4o-mini", context=["doc"]).id
    'context_recall'
    """
    opts = merge_options(ContextRecallOptions, options, option_kwargs)
    extractor = opts.extractor()

    async def verdicts_prompt(run: Run, results: StepResults) -> str:
        claims = results.preprocess_step_result.claims
        context = await required_context(run, opts, extractor, "context recall")
        return _verdicts_prompt(context, claims)

    return build_claim_verdict_scorer(
        id="context_recall",
        name="Context Recall",
        description="Share of the reference answer's claims found in the context",
        model=model,
        instructions=INSTRUCTIONS,
        scale=opts.scale,
        extract=PromptStep("Extract the reference answer's claims", _claims_prompt, _claims_schema),
        check=PromptStep("Check each claim against the context", verdicts_prompt, _verdicts_schema),
        items=lambda run, results: results.preprocess_step_result.claims,
        verdicts=lambda results: results.analyze_step_result.verdicts,
        formula=context_recall_score,
        reason_prompt=lambda run, results, score: _reason_prompt(
            query_text(run), results.analyze_step_result.verdicts, score, opts.scale
        ),
    )
