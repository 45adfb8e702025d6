"""Context precision: are the relevant context pieces ranked first (mean average precision)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from agentevals._model._run import Run
from agentevals._scoring._item_counts import with_item_counts
from agentevals._scoring._judge._fence import fenced
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer
from agentevals._scoring._steps import PromptStep, StepResults
from agentevals.scorers.llm._claim_verdicts import build_claim_verdict_scorer
from agentevals.scorers.llm._common import (
    as_text,
    expect_count,
    merge_options,
    normalized_label,
    query_text,
    response_text,
    scaled,
)
from agentevals.scorers.llm._context_options import ContextOptions, required_context

INSTRUCTIONS = (
    "You judge retrieved context for a question: a piece is relevant when it contributes information "
    "needed to produce the expected answer. You judge each piece on its own."
)


@dataclass(frozen=True, kw_only=True)
class ContextPrecisionOptions(ContextOptions):
    pass


class PrecisionVerdict(BaseModel):
    context_index: int
    verdict: Literal["yes", "no"]
    reason: str = ""

    _label = field_validator("verdict", mode="before")(normalized_label)


class PrecisionVerdicts(BaseModel):
    verdicts: list[PrecisionVerdict]


def mean_average_precision(relevant: list[bool]) -> float:
    """MAP of a ranked relevance list: mean of precision@k over the relevant positions k.

    >>> round(mean_average_precision([True, False, True, False]), 4)
    0.8333
    """
    hits, total = 0, 0.0
    for position, is_relevant in enumerate(relevant, 1):
        if is_relevant:
            hits += 1
            total += hits / position
    return total / hits if hits else 0.0


def context_precision_score(
    context: Sequence[str], verdicts: Sequence[PrecisionVerdict], scale: float
) -> float:
    """Mean average precision of the pieces ranked by ``context_index``, × ``scale``.

    The verdicts' indices must be 1..len(context), as the prompt numbers the pieces, or 0..len(context) - 1,
    each once (``ValueError`` otherwise; fewer verdicts than pieces too, extra ones are ignored).

    >>> yes, no = (PrecisionVerdict(context_index=1, verdict=v, reason="") for v in ("yes", "no"))
    >>> ranked = [v.model_copy(update={"context_index": i}) for i, v in enumerate([no, yes, yes], 1)]
    >>> context_precision_score(["a", "b", "c"], ranked, 1)
    0.58
    """
    counted = expect_count(verdicts, len(context), what="verdicts", per="context pieces")
    indices, n = sorted(v.context_index for v in counted), len(context)
    if indices not in (list(range(1, n + 1)), list(range(n))):
        raise ValueError(
            f"the judge's context_index values {indices} must be 1..{n} (or 0..{n - 1}), once each"
        )
    ranked = sorted(counted, key=lambda v: v.context_index)
    return scaled(mean_average_precision([v.verdict == "yes" for v in ranked]), scale)


def _expected_answer(run: Run) -> str:
    return as_text(run.ground_truth) if run.ground_truth is not None else response_text(run)


def _verdicts_prompt(run: Run, context: Sequence[str]) -> str:
    pieces = "\n".join(f"[{i}] {piece}" for i, piece in enumerate(context, 1))
    return fenced(
        lambda data: (
            f"""For each context piece, decide whether it is useful for producing the expected
answer to the question ("yes") or not ("no").

Question:
{data(query_text(run))}

Expected answer:
{data(_expected_answer(run) or "(empty)")}

Context pieces (index in brackets):
{data(pieces)}

Return {{"verdicts": [{{"context_index", "verdict", "reason"}}, ...]}} with exactly one verdict per piece,
in order, context_index 1 to {len(context)}."""
        )
    )


def _verdicts_schema(results: StepResults) -> type[PrecisionVerdicts]:
    return with_item_counts(PrecisionVerdicts, verdicts=len(results.preprocess_step_result["context"]))


def _reason_prompt(question: str, verdicts: Sequence[PrecisionVerdict], score: float, scale: float) -> str:
    lines = [f"- [{v.context_index}] {v.verdict}: {v.reason}" for v in verdicts]
    return fenced(
        lambda data: (
            f"""Explain in two or three sentences why the context precision
score is {score} (out of {scale}). The score is the mean average precision: relevant pieces ranked
early raise it. Say which pieces were relevant and how their positions affected the score.

Question:
{data(question)}

Verdicts per context piece:
{data(chr(10).join(lines))}"""
        )
    )


def create_context_precision_scorer(
    model: str | Judge,
    options: ContextPrecisionOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """Mean average precision of the context ranking, in [0, scale].

    Each context piece is judged relevant or not for producing the expected answer (``ground_truth``
    when the run has one, else the agent's output); relevant pieces ranked early score higher:
    [relevant, irrelevant, relevant, irrelevant] → (1/1 + 2/3) / 2 = 0.83. Context comes from
    ``get_context(run)`` (wins), ``context``, or the run (``run.context``, else tool results);
    with none the run is skipped. The context used is kept as ``preprocess_step_result = {"context": [...]}``
    (``get_context`` runs once per run). Verdicts must cover each piece exactly once.

    >>> create_context_precision_scorer("openai/gpt-4o-mini", context=["doc"]).id
    'context_precision'
    """
    opts = merge_options(ContextPrecisionOptions, options, option_kwargs)
    extractor = opts.extractor()

    async def resolve(run: Run) -> dict[str, list[str]]:
        """Resolve the context once (``get_context`` may query a vector store) and keep it on the result."""
        return {"context": await required_context(run, opts, extractor, "context precision")}

    return build_claim_verdict_scorer(
        id="context_precision",
        name="Context Precision",
        description="Whether relevant context is ranked first (mean average precision)",
        model=model,
        instructions=INSTRUCTIONS,
        scale=opts.scale,
        extract=resolve,
        check=PromptStep(
            "Judge each context piece's relevance",
            lambda run, results: _verdicts_prompt(run, results.preprocess_step_result["context"]),
            _verdicts_schema,
        ),
        items=lambda run, results: results.preprocess_step_result["context"],
        verdicts=lambda results: results.analyze_step_result.verdicts,
        formula=context_precision_score,
        reason_prompt=lambda run, results, score: _reason_prompt(
            query_text(run), results.analyze_step_result.verdicts, score, opts.scale
        ),
    )
