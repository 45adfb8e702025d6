"""Rubric: pass only when every required criterion of a rubric is satisfied."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agentevals._model._run import Run
from agentevals._scoring._item_counts import with_item_counts
from agentevals._scoring._judge._fence import fenced
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep, SkipJudge
from agentevals.scorers.llm._common import (
    check_scale,
    expect_count,
    history_text,
    make_judge,
    merge_options,
    numbered,
    query_text,
    response_text,
    scaled,
)

INSTRUCTIONS = (
    "You check a response against a rubric, criterion by criterion. A criterion is satisfied only when "
    "the response clearly meets it; you explain each decision briefly."
)
_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


@dataclass(frozen=True)
class RubricCriterion:
    """One rubric line; ``required`` criteria must all be satisfied for the rubric to pass."""

    description: str
    required: bool = True
    id: str | None = None


def parse_rubric(rubric: Any) -> tuple[RubricCriterion, ...]:
    """Criteria from a multi-line string (one per non-empty line, list markers stripped) or a list.

    >>> [c.description for c in parse_rubric("- Greets the user\\n2) Cites a source")]
    ['Greets the user', 'Cites a source']
    """
    if rubric is None:
        return ()
    if isinstance(rubric, str):
        lines = (_MARKER.sub("", line).strip() for line in rubric.splitlines())
        return tuple(RubricCriterion(line) for line in lines if line)
    if not isinstance(rubric, Sequence):
        raise ValueError(f"a rubric must be a string or a list of criteria, not {type(rubric).__name__}")
    criteria = []
    for item in rubric:
        if isinstance(item, RubricCriterion):
            criteria.append(item)
        elif isinstance(item, str) and item.strip():
            criteria.append(RubricCriterion(item.strip()))
        elif isinstance(item, Mapping) and isinstance(item.get("description"), str):
            criteria.append(
                RubricCriterion(item["description"], bool(item.get("required", True)), item.get("id"))
            )
        else:
            raise ValueError(f"a rubric criterion needs a description string, got {item!r}")
    return tuple(criteria)


@dataclass(frozen=True, kw_only=True)
class RubricOptions:
    """``criteria``: a rubric string or list of criteria; when absent, the run's ``rubric`` is used."""

    criteria: Any = None
    scale: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "criteria", parse_rubric(self.criteria) or None)
        check_scale("rubric", self.scale)


class CriterionResult(BaseModel):
    criterion: str
    satisfied: bool
    reasoning: str = ""


class RubricAnalysis(BaseModel):
    criteria: list[CriterionResult]
    overall_assessment: str


def _dynamic_rubric(run: Run) -> tuple[RubricCriterion, ...]:
    sources: list[Mapping[str, Any]] = [run.request_context, run.metadata]
    if isinstance(run.input, Mapping):
        sources.append(run.input)
    for source in sources:
        if source.get("rubric") is not None:
            return parse_rubric(source["rubric"])
    return ()


def _analyze_prompt(run: Run, criteria: Sequence[RubricCriterion]) -> str | SkipJudge:
    if not criteria:
        return SkipJudge(None)
    history = history_text(run)
    return fenced(
        lambda data: (
            f"""Check the response against each rubric criterion, in order.
{f"{chr(10)}Earlier conversation:{chr(10)}{data(history)}{chr(10)}" if history else ""}
Request:
{data(query_text(run) or "(none)")}

Response:
{data(response_text(run) or "(empty)")}

Rubric:
{numbered([c.description for c in criteria])}

Return {{"criteria": [{{"criterion", "satisfied", "reasoning"}}], "overall_assessment": "..."}} with
exactly one entry per criterion, in order ({len(criteria)} entries)."""
        )
    )


def unmet_criteria(
    criteria: Sequence[RubricCriterion], analysis: RubricAnalysis | None
) -> list[RubricCriterion]:
    """The criteria that decide the score (the required ones, or all when none is required) that the
    judge found unsatisfied; none without an analysis (no rubric, no judge call).

    Fewer results than criteria is a ``ValueError``; extra ones are ignored.

    >>> analysis = RubricAnalysis(overall_assessment="", criteria=[
    ...     CriterionResult(criterion="a", satisfied=False, reasoning=""),
    ...     CriterionResult(criterion="b", satisfied=False, reasoning="")])
    >>> unmet_criteria([RubricCriterion("a"), RubricCriterion("b", required=False)], analysis)
    [RubricCriterion(description='a', required=True, id=None)]
    """
    if analysis is None:
        return []
    answers = expect_count(analysis.criteria, len(criteria), what="criterion results", per="rubric criteria")
    gating = [c.required for c in criteria] if any(c.required for c in criteria) else [True] * len(criteria)
    return [c for c, r, gate in zip(criteria, answers, gating, strict=True) if gate and not r.satisfied]


def rubric_score(criteria: Sequence[RubricCriterion], analysis: RubricAnalysis | None, scale: float) -> float:
    """``scale`` unless a criterion that decides the score is unmet (see ``unmet_criteria``), else 0."""
    return 0.0 if unmet_criteria(criteria, analysis) else scaled(1.0, scale)


def _reason(criteria: Sequence[RubricCriterion], analysis: RubricAnalysis | None, score: float) -> str:
    if analysis is None:
        return f"The score is {score} because no rubric was given, so there is nothing to fail."
    missing = unmet_criteria(criteria, analysis)
    if not missing:
        return f"The score is {score} because every required rubric criterion is satisfied."
    listed = "; ".join(c.description for c in missing)
    return f"The score is {score} because these required criteria are not met: {listed}."


def create_rubric_scorer(
    model: str | Judge, options: RubricOptions | Mapping[str, Any] | None = None, **option_kwargs: Any
) -> Scorer:
    """``scale`` when every required criterion is satisfied (all of them if none is required), else 0.

    The rubric is ``criteria`` or, per run, ``request_context["rubric"]``, ``metadata["rubric"]`` or
    a dict input's ``"rubric"``.
    Without any rubric the run passes (score = scale) without a judge call. The reason lists the
    unmet criteria (no extra judge call).

    >>> create_rubric_scorer("openai/gpt-4o-mini", criteria="- Greets the user").id
    'rubric'
    """
    opts = merge_options(RubricOptions, options, option_kwargs)

    def criteria_of(run: Run) -> tuple[RubricCriterion, ...]:
        return opts.criteria or _dynamic_rubric(run)

    return (
        create_scorer(
            id="rubric",
            name="Rubric",
            description="Pass when every required rubric criterion is satisfied",
            judge=make_judge(model, INSTRUCTIONS),
            score_range=(0, opts.scale),
            type="agent",
        )
        .analyze(
            PromptStep(
                description="Check the response against each rubric criterion",
                create_prompt=lambda run: _analyze_prompt(run, criteria_of(run)),
                output_schema=lambda run: with_item_counts(RubricAnalysis, criteria=len(criteria_of(run))),
            )
        )
        .generate_score(
            lambda run, results: rubric_score(criteria_of(run), results.analyze_step_result, opts.scale)
        )
        .generate_reason(
            lambda run, results, score: _reason(criteria_of(run), results.analyze_step_result, score)
        )
    )
