"""Noise sensitivity: how robust the agent's answer is to noise added to the query."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._judge._fence import fenced
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep
from agentevals.scorers.llm._common import (
    UnitScore,
    check_number,
    check_scale,
    listed,
    make_judge,
    merge_options,
    normalized_label,
    numbered,
    query_text,
    reason_step,
    response_text,
    scaled,
)

INSTRUCTIONS = (
    "You compare an agent's answer to a clean query with its answer to a noisy version of the same "
    "query, and judge how much the noise (distractions, misleading or irrelevant text) changed it."
)
ImpactLevel = Literal["none", "minimal", "moderate", "significant", "severe"]
DEFAULT_IMPACT_WEIGHTS: dict[str, float] = {
    "none": 1.0,
    "minimal": 0.85,
    "moderate": 0.6,
    "significant": 0.3,
    "severe": 0.1,
}
DIMENSIONS = ("content_accuracy", "completeness", "relevance", "consistency", "hallucination_resistance")


@dataclass(frozen=True, kw_only=True)
class NoiseSensitivityOptions:
    """The clean ``baseline_response`` and the ``noisy_query`` (required), plus scoring weights.

    ``impact_weights`` merge key by key with the defaults. A nested ``scoring={...}`` (camelCase
    ``impactWeights``, ``penalties``, ``discrepancyThreshold``) is accepted too.
    """

    baseline_response: str = ""
    noisy_query: str = ""
    noise_type: str | None = None
    impact_weights: Mapping[str, float] = field(default_factory=dict)
    major_issue_per_item: float = 0.1
    max_major_issue_penalty: float = 0.3
    discrepancy_threshold: float = 0.2
    scale: float = 1.0
    scoring: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        owner = "noise sensitivity"
        scoring = dict(self.scoring or {})
        penalties = dict(scoring.pop("penalties", None) or {})
        nested = {
            "impact_weights": scoring.pop("impactWeights", scoring.pop("impact_weights", None)),
            "major_issue_per_item": penalties.get("majorIssuePerItem", penalties.get("major_issue_per_item")),
            "max_major_issue_penalty": penalties.get(
                "maxMajorIssuePenalty", penalties.get("max_major_issue_penalty")
            ),
            "discrepancy_threshold": scoring.pop(
                "discrepancyThreshold", scoring.pop("discrepancy_threshold", None)
            ),
        }
        for name, value in nested.items():
            if value is not None:
                object.__setattr__(self, name, value)
        object.__setattr__(self, "scoring", None)  # flattened: later merges must not re-apply it
        if not (isinstance(self.baseline_response, str) and self.baseline_response.strip()) or not (
            isinstance(self.noisy_query, str) and self.noisy_query.strip()
        ):
            raise ValueError(
                "Both baseline_response and noisy_query are required for noise sensitivity scoring: run the "
                "agent on the clean query (baseline_response) and on a noisy variant (noisy_query), and "
                "score the noisy run"
            )
        unknown = set(self.impact_weights) - set(DEFAULT_IMPACT_WEIGHTS)
        if unknown:
            raise ValueError(
                f"{owner}: unknown impact levels {sorted(unknown)}; use {list(DEFAULT_IMPACT_WEIGHTS)}"
            )
        weights = {**DEFAULT_IMPACT_WEIGHTS, **self.impact_weights}
        for level, weight in weights.items():
            check_number(owner, f"impact_weights[{level!r}]", weight, low=0.0, high=1.0)
        object.__setattr__(self, "impact_weights", weights)
        for name in ("major_issue_per_item", "max_major_issue_penalty", "discrepancy_threshold"):
            check_number(owner, name, getattr(self, name), low=0.0, high=1.0)
        check_scale(owner, self.scale)


class DimensionImpact(BaseModel):
    dimension: str
    impact_level: ImpactLevel
    specific_changes: str
    noise_influence: str

    _label = field_validator("impact_level", mode="before")(normalized_label)


class NoiseAnalysis(BaseModel):
    dimensions: list[DimensionImpact] = listed(len(DIMENSIONS), at_least=len(DIMENSIONS))
    overall_assessment: str
    major_issues: list[str] = listed()
    robustness_score: UnitScore


def _analysis_prompt(run: Run, opts: NoiseSensitivityOptions) -> str:
    original, noisy_response = query_text(run), response_text(run)
    if not original or not noisy_response:
        raise SkipRun(
            "Both the original query (run input) and the response to the noisy query (run output) are "
            "required for noise sensitivity evaluation",
            reason="no_input" if not original else "no_output",
        )
    noise = f" (noise type: {opts.noise_type})" if opts.noise_type else ""
    return fenced(
        lambda data: (
            f"""Compare the two answers and rate how much the noise{noise} affected the second one
on each dimension: {", ".join(DIMENSIONS)}. Impact levels: "none", "minimal", "moderate", "significant",
"severe". List major issues the noise caused (empty if none) and give a robustness_score between 0 (the
noise derailed the answer) and 1 (unaffected).

Original query:
{data(original)}

Answer to the original query (baseline):
{data(opts.baseline_response)}

Noisy query:
{data(opts.noisy_query)}

Answer to the noisy query:
{data(noisy_response)}

Return {{"dimensions": [{{"dimension", "impact_level", "specific_changes", "noise_influence"}}],
"overall_assessment": "...", "major_issues": [...], "robustness_score": 0.0-1.0}}."""
        )
    )


def noise_sensitivity_score(analysis: NoiseAnalysis, options: NoiseSensitivityOptions) -> float:
    """The judge's robustness score, capped by the mean impact weight of the dimensions when the two
    differ by more than ``discrepancy_threshold``, minus the major-issue penalty, floored at 0, × scale.

    >>> dimension = DimensionImpact(dimension="completeness", impact_level="moderate",
    ...                             specific_changes="", noise_influence="")
    >>> analysis = NoiseAnalysis(dimensions=[dimension], overall_assessment="", major_issues=["x"],
    ...                          robustness_score=0.9)
    >>> noise_sensitivity_score(analysis, NoiseSensitivityOptions(baseline_response="b", noisy_query="n"))
    0.5
    """
    final = analysis.robustness_score
    if analysis.dimensions:
        weights = options.impact_weights
        calculated = sum(weights[d.impact_level] for d in analysis.dimensions) / len(analysis.dimensions)
        if abs(final - calculated) > options.discrepancy_threshold:
            final = min(final, calculated)
    penalty = min(len(analysis.major_issues) * options.major_issue_per_item, options.max_major_issue_penalty)
    return scaled(max(0.0, final - penalty), options.scale)


def _reason_prompt(analysis: NoiseAnalysis, score: float, scale: float) -> str:
    lines = [f"- {d.dimension}: {d.impact_level} ({d.specific_changes})" for d in analysis.dimensions]
    return fenced(
        lambda data: (
            f"""Explain in two or three sentences why the noise robustness score is {score} (out of
{scale}; higher is more robust).

Impact per dimension:
{data(chr(10).join(lines) or "(none)")}

Major issues:
{data(numbered(analysis.major_issues))}

Overall:
{data(analysis.overall_assessment)}"""
        )
    )


def create_noise_sensitivity_scorer(
    model: str | Judge,
    options: NoiseSensitivityOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """Robustness of the answer to a noisy query, in [0, scale] (higher is more robust).

    The run's input is the clean query and its output the answer to ``noisy_query``. The judge's
    ``robustness_score`` is capped by the mean impact weight of the five dimensions when the two
    differ by more than ``discrepancy_threshold``; each major issue then subtracts
    ``major_issue_per_item`` (at most ``max_major_issue_penalty``).

    >>> create_noise_sensitivity_scorer(
    ...     "openai/gpt-4o-mini", baseline_response="Paris.", noisy_query="Capital of France? Cats!").id
    'noise_sensitivity'
    """
    opts = merge_options(NoiseSensitivityOptions, options, option_kwargs)
    judge = make_judge(model, INSTRUCTIONS)
    return (
        create_scorer(
            id="noise_sensitivity",
            name="Noise Sensitivity (LLM)",
            description="Robustness of the answer to noise in the query",
            judge=judge,
            score_range=(0, opts.scale),
            type="agent",
        )
        .analyze(
            PromptStep(
                "Compare baseline and noisy answers", lambda run: _analysis_prompt(run, opts), NoiseAnalysis
            )
        )
        .generate_score(lambda results: noise_sensitivity_score(results.analyze_step_result, opts))
        .generate_reason(
            reason_step(
                judge,
                lambda run, results, score: _reason_prompt(results.analyze_step_result, score, opts.scale),
            )
        )
    )
