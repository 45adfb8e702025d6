"""Factuality: an LLM judge of whether the output's facts agree with the expected answer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._judge._fence import fenced
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep, StepResults
from agentevals.scorers.llm._common import check_scale, make_judge, merge_options, normalized_label

Relation = Literal["subset", "superset", "same", "conflict", "equivalent"]

RELATION_SCORES: dict[str, float] = {
    "subset": 0.4,
    "superset": 0.6,
    "same": 1.0,
    "conflict": 0.0,
    "equivalent": 1.0,
}
"""How each relation between submitted and expected answer scores (a fact from autoevals' rubric)."""

INSTRUCTIONS = (
    "You check answers against a reference answer written by an expert. You compare facts only: "
    "ignore style, grammar, formatting and wording. You are precise and never invent facts."
)


class FactualityVerdict(BaseModel):
    relation: Relation = Field(
        description="subset | superset | same | conflict | equivalent (see the prompt)"
    )
    reason: str = Field(default="", description="One or two sentences naming the facts that decided it")

    _label = field_validator("relation", mode="before")(normalized_label)


def _prompt(run: Run) -> str:
    if run.ground_truth is None:
        raise SkipRun(
            "factuality compares the output with ground_truth, but the run has none", reason="no_ground_truth"
        )
    return fenced(
        lambda data: (
            f"""Compare the factual content of a submitted answer with an expert's reference answer.

Question:
{data(run.input_text)}

Reference answer (expert):
{data(str(run.ground_truth))}

Submitted answer:
{data(run.output_text)}

Choose the one relation that fits best:
- "subset": the submission states only some of the reference's facts and contradicts none of them.
- "superset": the submission states all of the reference's facts plus further facts that do not
  contradict it.
- "same": the submission states the same facts as the reference.
- "conflict": the submission contradicts the reference on at least one fact.
- "equivalent": the two differ, but only in ways that do not matter for answering the question.

Return the relation and a short reason."""
        )
    )


def factuality_score(relation: Relation, scale: float) -> float:
    """The relation's score (see ``RELATION_SCORES``) × ``scale``.

    >>> factuality_score("superset", 5)
    3.0
    """
    return RELATION_SCORES[relation] * scale


def _reason(results: StepResults) -> str:
    verdict: FactualityVerdict = results.analyze_step_result
    return f"{verdict.relation}: {verdict.reason}" if verdict.reason else verdict.relation


@dataclass(frozen=True, kw_only=True)
class FactualityOptions:
    """``scale``: the score of a fully agreeing answer (default 1)."""

    scale: float = 1.0

    def __post_init__(self) -> None:
        check_scale("factuality", self.scale)


def create_factuality_scorer(
    model: str | Judge, options: FactualityOptions | Mapping[str, Any] | None = None, **option_kwargs: Any
) -> Scorer:
    """Score 0–1 (times ``scale``) for how well the output's facts agree with ``ground_truth``.

    ``model`` is a LiteLLM model string or a configured :class:`~agentevals.Judge`. The judge names the
    relation of the two answers (subset 0.4, superset 0.6, same or equivalent 1, conflict 0).

    >>> create_factuality_scorer("openai/gpt-4o-mini").id
    'factuality'
    """
    opts = merge_options(FactualityOptions, options, option_kwargs)
    judge = make_judge(model, INSTRUCTIONS)
    return (
        create_scorer(
            id="factuality",
            description="Factual agreement of the output with the expected answer",
            judge=judge,
            score_range=(0, opts.scale),
        )
        .analyze(
            PromptStep(
                description="Classify how the output's facts relate to the reference answer",
                create_prompt=_prompt,
                output_schema=FactualityVerdict,
            )
        )
        .generate_score(lambda results: factuality_score(results.analyze_step_result.relation, opts.scale))
        .generate_reason(_reason)
    )
