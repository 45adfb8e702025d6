"""Answer similarity: how closely the answer matches the expected answer (``ground_truth``)."""

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
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep, StepResults
from agentevals.scorers.llm._common import (
    as_text,
    check_number,
    check_scale,
    expect_count,
    extraction_count,
    make_judge,
    merge_options,
    most_items,
    normalized_label,
    numbered,
    query_text,
    reason_step,
    response_text,
    scaled,
)

INSTRUCTIONS = (
    "You compare an answer with a reference answer unit by unit: facts, numbers, names and claims. "
    "You recognise paraphrases as matches and you flag contradictions precisely."
)
NO_GROUND_TRUTH = "No ground truth was provided for comparison. Score is 0 by default."
EXTRA_INFO_CAP = 0.2


@dataclass(frozen=True, kw_only=True)
class AnswerSimilarityOptions:
    """Weights of the similarity formula (contradiction penalty 1.0)."""

    require_ground_truth: bool = True
    semantic_threshold: float = 0.8
    exact_match_bonus: float = 0.2
    missing_penalty: float = 0.15
    contradiction_penalty: float = 1.0
    extra_info_penalty: float = 0.05
    scale: float = 1.0

    def __post_init__(self) -> None:
        owner = "answer similarity"
        if not isinstance(self.require_ground_truth, bool):
            raise ValueError(f"{owner}: option require_ground_truth must be True or False")
        check_number(owner, "semantic_threshold", self.semantic_threshold, low=0.0, high=1.0)
        check_number(owner, "exact_match_bonus", self.exact_match_bonus, low=0.0, high=1.0)
        for name in ("missing_penalty", "contradiction_penalty", "extra_info_penalty"):
            check_number(owner, name, getattr(self, name), low=0.0)
        check_scale(owner, self.scale)


class SemanticUnits(BaseModel):
    output_units: list[str]
    ground_truth_units: list[str]


class UnitMatch(BaseModel):
    ground_truth_unit: str
    output_unit: str | None
    match_type: Literal["exact", "semantic", "partial", "missing"]
    explanation: str = ""

    _label = field_validator("match_type", mode="before")(normalized_label)


class Contradiction(BaseModel):
    output_unit: str
    ground_truth_unit: str
    explanation: str = ""


class SimilarityAnalysis(BaseModel):
    matches: list[UnitMatch]
    extra_in_output: list[str]
    contradictions: list[Contradiction]


def _ground_truth(run: Run) -> str:
    return "" if run.ground_truth is None else as_text(run.ground_truth).strip()


def _units_prompt(run: Run, require_ground_truth: bool) -> str:
    truth = _ground_truth(run)
    if not truth and require_ground_truth:
        raise SkipRun(
            "answer similarity needs run.ground_truth (the expected answer); add it to the run or "
            "dataset item, or pass require_ground_truth=False to score such runs 0",
            reason="no_ground_truth",
        )
    return fenced(
        lambda data: (
            f"""Break each text into its semantic units: the separate facts, claims, numbers and
names it states, one short standalone sentence each. Empty text gives an empty list.

Answer (output):
{data(response_text(run) or "(empty)")}

Reference answer (ground truth):
{data(truth or "(none)")}

Return {{"output_units": [...], "ground_truth_units": [...]}}."""
        )
    )


def answer_similarity_score(
    units: SemanticUnits, analysis: SimilarityAnalysis, options: AnswerSimilarityOptions
) -> float:
    """The similarity formula of :func:`create_answer_similarity_scorer`, in [0, ``options.scale``].

    No reference units (no reference answer) score 0; fewer matches than reference units is a
    ``ValueError``.

    >>> units = SemanticUnits(output_units=["a"], ground_truth_units=["a", "b"])
    >>> exact = UnitMatch(ground_truth_unit="a", output_unit="a", match_type="exact", explanation="")
    >>> missing = UnitMatch(ground_truth_unit="b", output_unit=None, match_type="missing", explanation="")
    >>> analysis = SimilarityAnalysis(matches=[exact, missing], extra_in_output=[], contradictions=[])
    >>> answer_similarity_score(units, analysis, AnswerSimilarityOptions())  # (1.2 - 0.15) / (2 × 1.2)
    0.44
    """
    matches = expect_count(
        analysis.matches, len(units.ground_truth_units), what="matches", per="reference units"
    )
    if not matches:
        return 0.0
    credit = {
        "exact": 1.0 + options.exact_match_bonus,
        "semantic": options.semantic_threshold,
        "partial": options.semantic_threshold * 0.5,
        "missing": -options.missing_penalty,
    }
    value = sum(credit[m.match_type] for m in matches)
    value /= len(matches) * (1.0 + options.exact_match_bonus)
    value -= len(analysis.contradictions) * options.contradiction_penalty
    value -= min(len(analysis.extra_in_output) * options.extra_info_penalty, EXTRA_INFO_CAP)
    return scaled(min(max(value, 0.0), 1.0), options.scale)


def _units_schema(run: Run) -> type[SemanticUnits]:
    """At least one unit from each non-empty text, when there is a reference (without one the score is 0
    whatever the units)."""
    answer, truth = response_text(run), _ground_truth(run)
    if not truth:
        return with_item_counts(SemanticUnits, output_units=(0, most_items(answer)), ground_truth_units=0)
    return with_item_counts(
        SemanticUnits, output_units=extraction_count(answer), ground_truth_units=extraction_count(truth)
    )


def _analysis_schema(units: SemanticUnits) -> type[SimilarityAnalysis]:
    """One match per reference unit; no more extra or contradicting answer units than answer units."""
    answer = len(units.output_units)
    return with_item_counts(
        SimilarityAnalysis,
        matches=len(units.ground_truth_units),
        extra_in_output=(0, answer),
        contradictions=(0, answer),
    )


def _analysis_prompt(run: Run, units: SemanticUnits) -> str:
    answer_units: Sequence[str] = units.output_units
    reference_units: Sequence[str] = units.ground_truth_units
    return fenced(
        lambda data: (
            f"""For each reference unit, find how the answer covers it:
- "exact": the answer states the same thing in (nearly) the same words;
- "semantic": the answer states the same meaning in other words;
- "partial": the answer states part of it;
- "missing": the answer does not state it (output_unit null).
Also list answer units absent from the reference (extra_in_output) and every answer unit that
contradicts a reference unit (contradictions).

Reference units:
{data(numbered(reference_units))}

Answer units:
{data(numbered(answer_units))}

Return {{"matches": [{{"ground_truth_unit", "output_unit", "match_type", "explanation"}}], \
"extra_in_output": [...], "contradictions": [{{"output_unit", "ground_truth_unit", "explanation"}}]}} with
exactly one match per reference unit, in order ({len(reference_units)} matches)."""
        )
    )


def _reason_prompt(run: Run, analysis: SimilarityAnalysis, score: float, scale: float) -> str:
    return fenced(
        lambda data: (
            f"""Explain in two or three sentences why the answer scored {score} (out of {scale}) for
similarity to the reference, and what would make it match better.

Question:
{data(query_text(run))}

Answer:
{data(response_text(run))}

Reference:
{data(_ground_truth(run))}

Analysis:
{data(analysis.model_dump_json())}"""
        )
    )


def create_answer_similarity_scorer(
    model: str | Judge,
    options: AnswerSimilarityOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """Similarity of the answer to ``run.ground_truth`` in [0, scale], for CI regression checks.

    Each reference unit scores ``1 + exact_match_bonus`` (exact), ``semantic_threshold`` (semantic),
    half of it (partial) or ``-missing_penalty`` (missing); the sum is divided by
    ``units × (1 + exact_match_bonus)``, then each contradiction subtracts ``contradiction_penalty`` and
    extra information subtracts ``extra_info_penalty`` each (at most 0.2); clamped to [0, 1], × scale.
    A run without ground truth is skipped (``no_ground_truth``) unless ``require_ground_truth=False``
    (then it scores 0). The judge must find at least one semantic unit in a non-empty answer or reference.

    >>> create_answer_similarity_scorer("openai/gpt-4o-mini", semantic_threshold=0.7).id
    'answer_similarity'
    """
    opts = merge_options(AnswerSimilarityOptions, options, option_kwargs)
    judge = make_judge(model, INSTRUCTIONS)

    def score(run: Run, results: StepResults) -> float:
        if not _ground_truth(run):
            return 0.0
        return answer_similarity_score(results.preprocess_step_result, results.analyze_step_result, opts)

    def fixed(run: Run, results: StepResults, score: float) -> str | None:
        return None if _ground_truth(run) else NO_GROUND_TRUTH

    return (
        create_scorer(
            id="answer_similarity",
            name="Answer Similarity",
            description="Similarity of the answer to the expected answer",
            judge=judge,
            score_range=(0, opts.scale),
            type="agent",
        )
        .preprocess(
            PromptStep(
                "Extract semantic units of answer and reference",
                lambda run: _units_prompt(run, opts.require_ground_truth),
                _units_schema,
            )
        )
        .analyze(
            PromptStep(
                "Match reference units against the answer",
                lambda run, results: _analysis_prompt(run, results.preprocess_step_result),
                lambda results: _analysis_schema(results.preprocess_step_result),
            )
        )
        .generate_score(score)
        .generate_reason(
            reason_step(
                judge,
                lambda run, results, score: _reason_prompt(
                    run, results.analyze_step_result, score, opts.scale
                ),
                fixed,
            )
        )
    )
