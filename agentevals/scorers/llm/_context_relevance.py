"""Context relevance: how relevant the provided context is, whether it was used, what was missing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from agentevals._model._run import Run
from agentevals._scoring._item_counts import with_item_counts
from agentevals._scoring._judge._fence import fenced
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep, StepResults
from agentevals.scorers.llm._common import (
    check_number,
    expect_count,
    listed,
    make_judge,
    merge_options,
    normalized_label,
    numbered,
    query_text,
    reason_step,
    response_text,
    scaled,
    snake_case,
)
from agentevals.scorers.llm._context_options import ContextOptions, required_context

INSTRUCTIONS = (
    "You assess retrieved context for a question: how relevant each piece is, whether the answer used "
    "it, and which information needed for a good answer the context lacks."
)
_PENALTIES = ("unused_high_relevance_context", "missing_context_per_item", "max_missing_context_penalty")
RELEVANCE_WEIGHTS: dict[str, float] = {"high": 1.0, "medium": 0.7, "low": 0.3, "none": 0.0}


@dataclass(frozen=True, kw_only=True)
class ContextRelevanceOptions(ContextOptions):
    """Penalties: per unused highly relevant piece, per missing item, and the cap on the latter."""

    unused_high_relevance_context: float = 0.1
    missing_context_per_item: float = 0.15
    max_missing_context_penalty: float = 0.5
    penalties: Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        for key, value in dict(self.penalties or {}).items():
            name = snake_case(str(key))
            if name not in _PENALTIES:
                raise ValueError(f"context relevance: unknown penalty {key!r}; use {', '.join(_PENALTIES)}")
            object.__setattr__(self, name, value)
        object.__setattr__(self, "penalties", None)  # flattened: later merges must not re-apply it
        for name in (
            "unused_high_relevance_context",
            "missing_context_per_item",
            "max_missing_context_penalty",
        ):
            check_number("context relevance", name, getattr(self, name), low=0.0, high=1.0)


class ContextEvaluation(BaseModel):
    context_index: int
    context_piece: str
    relevance_level: Literal["high", "medium", "low", "none"]
    was_used: bool
    reasoning: str = ""

    _label = field_validator("relevance_level", mode="before")(normalized_label)


class RelevanceAnalysis(BaseModel):
    evaluations: list[ContextEvaluation]
    missing_context: list[str] = listed()
    overall_assessment: str


def context_relevance_score(
    context: Sequence[str], analysis: RelevanceAnalysis, options: ContextRelevanceOptions
) -> float:
    """Mean relevance weight of the pieces minus the unused and missing-context penalties, floored at 0,
    × ``options.scale``.

    Fewer evaluations than pieces is a ``ValueError``; extra ones are ignored.

    >>> high = ContextEvaluation(context_index=0, context_piece="a", relevance_level="high",
    ...                          was_used=False, reasoning="")
    >>> analysis = RelevanceAnalysis(evaluations=[high], missing_context=["x"], overall_assessment="")
    >>> context_relevance_score(["a"], analysis, ContextRelevanceOptions())  # 1 - 0.1 - 0.15
    0.75
    """
    evaluations = expect_count(analysis.evaluations, len(context), what="evaluations", per="context pieces")
    base = sum(RELEVANCE_WEIGHTS[e.relevance_level] for e in evaluations) / len(evaluations)
    unused = sum(e.relevance_level == "high" and not e.was_used for e in evaluations)
    missing = min(
        len(analysis.missing_context) * options.missing_context_per_item, options.max_missing_context_penalty
    )
    return scaled(max(0.0, base - unused * options.unused_high_relevance_context - missing), options.scale)


def _analysis_prompt(run: Run, context: Sequence[str]) -> str:
    pieces = "\n".join(f"[{i}] {piece}" for i, piece in enumerate(context, 1))
    return fenced(
        lambda data: (
            f"""Assess each context piece for the question:
- relevance_level: "high" (directly needed), "medium" (helpful), "low" (marginal), "none" (unrelated);
- was_used: whether the answer relies on information from this piece.
Then list information a good answer needs that no piece provides (missing_context; empty if none),
and give a one-sentence overall assessment.

Question:
{data(query_text(run))}

Answer:
{data(response_text(run) or "(empty)")}

Context pieces (index in brackets):
{data(pieces)}

Return {{"evaluations": [{{"context_index", "context_piece", "relevance_level", "was_used", "reasoning"}}],
"missing_context": [...], "overall_assessment": "..."}} with exactly one evaluation per piece
({len(context)} evaluations)."""
        )
    )


def _analysis_schema(results: StepResults) -> type[RelevanceAnalysis]:
    return with_item_counts(RelevanceAnalysis, evaluations=len(results.preprocess_step_result["context"]))


def _reason_prompt(question: str, analysis: RelevanceAnalysis, score: float, scale: float) -> str:
    lines = [
        f"- [{e.context_index}] {e.relevance_level}, {'used' if e.was_used else 'unused'}: {e.reasoning}"
        for e in analysis.evaluations
    ]
    return fenced(
        lambda data: (
            f"""Explain in two or three sentences why the context relevance
score is {score} (out of {scale}), mentioning irrelevant or unused pieces and missing information.

Question:
{data(question)}

Evaluations:
{data(chr(10).join(lines))}

Missing information:
{data(numbered(analysis.missing_context))}

Overall:
{data(analysis.overall_assessment)}"""
        )
    )


def create_context_relevance_scorer(
    model: str | Judge,
    options: ContextRelevanceOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """Weighted relevance of the context minus usage and missing-information penalties, in [0, scale].

    ``base = mean(weight)`` with high 1.0, medium 0.7, low 0.3, none 0; minus
    ``unused_high_relevance_context`` per highly relevant piece the answer did not use, minus
    ``missing_context_per_item`` per missing item (at most ``max_missing_context_penalty``); floored at
    0, × scale. Context: ``get_context(run)`` (wins), ``context``, or the run's ``run.context`` /
    tool results; with none the run is skipped (``no_context``). The context used is kept as
    ``preprocess_step_result = {"context": [...]}``. Penalties are flat options; a nested
    ``penalties={"unusedHighRelevanceContext": ..., ...}`` (camelCase keys) is accepted too.

    >>> create_context_relevance_scorer("openai/gpt-4o-mini", context=["doc"]).name
    'Context Relevance (LLM)'
    """
    opts = merge_options(ContextRelevanceOptions, options, option_kwargs)
    judge = make_judge(model, INSTRUCTIONS)
    extractor = opts.extractor()

    async def resolve(run: Run) -> dict[str, list[str]]:
        """Resolve the context once (``get_context`` may query a vector store) and keep it on the result."""
        return {"context": await required_context(run, opts, extractor, "context relevance")}

    return (
        create_scorer(
            id="context_relevance",
            name="Context Relevance (LLM)",
            description="Relevance and use of the provided context",
            judge=judge,
            score_range=(0, opts.scale),
            type="agent",
        )
        .preprocess(resolve)
        .analyze(
            PromptStep(
                "Assess relevance and use of each context piece",
                lambda run, results: _analysis_prompt(run, results.preprocess_step_result["context"]),
                _analysis_schema,
            )
        )
        .generate_score(
            lambda results: context_relevance_score(
                results.preprocess_step_result["context"], results.analyze_step_result, opts
            )
        )
        .generate_reason(
            reason_step(
                judge,
                lambda run, results, score: _reason_prompt(
                    query_text(run), results.analyze_step_result, score, opts.scale
                ),
            )
        )
    )
