"""Rubric: pass only when every required criterion of a rubric is satisfied."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agentevals._model._run import Run
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep, SkipJudge, StepResults
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
    reasoning: str


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
    judge = make_judge(model, INSTRUCTIONS)

    def rubric_of(run: Run) -> tuple[RubricCriterion, ...]:
        return opts.criteria or _dynamic_rubric(run)

    def analyze_prompt(run: Run) -> str | SkipJudge:
        criteria = rubric_of(run)
        if not criteria:
            return SkipJudge(None)
        history = history_text(run)
        prompt = f"""Check the response against each rubric criterion, in order.
{f"{chr(10)}Earlier conversation:{chr(10)}{history}{chr(10)}" if history else ""}
Request:
{query_text(run) or "(none)"}

Response:
{response_text(run) or "(empty)"}

Rubric:
{numbered([c.description for c in criteria])}

Return {{"criteria": [{{"criterion", "satisfied", "reasoning"}}], "overall_assessment": "..."}} with
exactly one entry per criterion, in order ({len(criteria)} entries)."""
        return prompt

    def unmet(run: Run, results: StepResults) -> list[RubricCriterion]:
        criteria = rubric_of(run)
        analysis: RubricAnalysis | None = results.analyze_step_result
        if analysis is None:
            return []
        answers = expect_count(
            analysis.criteria, len(criteria), what="criterion results", per="rubric criteria"
        )
        gating = (
            [c.required for c in criteria] if any(c.required for c in criteria) else [True] * len(criteria)
        )
        return [c for c, r, gate in zip(criteria, answers, gating, strict=True) if gate and not r.satisfied]

    def score(run: Run, results: StepResults) -> float:
        return 0.0 if unmet(run, results) else scaled(1.0, opts.scale)

    def reason(run: Run, results: StepResults, score: float) -> str:
        if results.analyze_step_result is None:
            return f"The score is {score} because no rubric was given, so there is nothing to fail."
        missing = unmet(run, results)
        if not missing:
            return f"The score is {score} because every required rubric criterion is satisfied."
        listed = "; ".join(c.description for c in missing)
        return f"The score is {score} because these required criteria are not met: {listed}."

    return (
        create_scorer(
            id="rubric",
            name="Rubric",
            description="Pass when every required rubric criterion is satisfied",
            judge=judge,
            score_range=(0, opts.scale),
            type="agent",
        )
        .analyze(
            PromptStep(
                description="Check the response against each rubric criterion",
                create_prompt=analyze_prompt,
                output_schema=RubricAnalysis,
            )
        )
        .generate_score(score)
        .generate_reason(reason)
    )
