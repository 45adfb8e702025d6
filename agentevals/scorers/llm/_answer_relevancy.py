"""Answer relevancy: how much of the answer addresses the question."""

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
from agentevals.scorers.llm._claim_verdicts import build_claim_verdict_scorer, verdict_share
from agentevals.scorers.llm._common import (
    check_number,
    check_scale,
    extraction_count,
    merge_options,
    normalized_label,
    numbered,
    query_text,
    response_text,
)

INSTRUCTIONS = (
    "You judge whether parts of an answer address the question that was asked. You judge relevance only, "
    "never correctness. An empty answer or an error message does not address the question."
)


@dataclass(frozen=True, kw_only=True)
class AnswerRelevancyOptions:
    """``uncertainty_weight``: credit for an 'unsure' statement (0–1); ``scale``: maximum score."""

    uncertainty_weight: float = 0.3
    scale: float = 1.0

    def __post_init__(self) -> None:
        check_number("answer relevancy", "uncertainty_weight", self.uncertainty_weight, low=0.0, high=1.0)
        check_scale("answer relevancy", self.scale)


class Statements(BaseModel):
    statements: list[str]


class RelevancyVerdict(BaseModel):
    statement: str
    result: Literal["yes", "unsure", "no"]
    reason: str = ""

    _label = field_validator("result", mode="before")(normalized_label)


class RelevancyVerdicts(BaseModel):
    results: list[RelevancyVerdict]


def _statements_prompt(run: Run) -> str:
    return fenced(
        lambda data: (
            f"""Split the answer below into standalone statements.
- Split compound sentences joined by "and" into separate statements.
- A one-word answer is one statement; an error message is one statement.
- Keep each statement's meaning intact; do not add or judge anything.
- If the answer is empty, return an empty list.

Answer:
{data(response_text(run))}

Return {{"statements": [...]}}."""
        )
    )


def _verdicts_prompt(run: Run, results: StepResults) -> str:
    statements = results.preprocess_step_result.statements
    return fenced(
        lambda data: (
            f"""Decide for each statement whether it addresses the question.
- "yes": it directly answers or supports answering the question.
- "unsure": it is on topic but only partly answers it, or is on topic yet looks incorrect.
- "no": it is off topic, empty, or an error message.
Do not judge factual correctness.

Question:
{data(query_text(run))}

Statements:
{data(numbered(statements))}

Return {{"results": [{{"statement", "result", "reason"}}, ...]}} with exactly one entry per statement, in
the same order ({len(statements)} entries)."""
        )
    )


def _statements_schema(run: Run) -> type[Statements]:
    return with_item_counts(Statements, statements=extraction_count(response_text(run)))


def _verdicts_schema(results: StepResults) -> type[RelevancyVerdicts]:
    return with_item_counts(RelevancyVerdicts, results=len(results.preprocess_step_result.statements))


def answer_relevancy_score(
    statements: Sequence[str], verdicts: Sequence[RelevancyVerdict], uncertainty_weight: float, scale: float
) -> float:
    """``(yes + uncertainty_weight × unsure) / statements × scale``; no statements (an empty answer) score 0.

    Fewer verdicts than statements is a ``ValueError``.

    >>> yes, unsure, no = (
    ...     RelevancyVerdict(statement="s", result=r, reason="") for r in ("yes", "unsure", "no"))
    >>> answer_relevancy_score(["s1", "s2", "s3", "s4"], [yes, unsure, no, yes], 0.5, 10)
    6.25
    """
    labels = [v.result for v in verdicts]
    credit = {"yes": 1.0, "unsure": uncertainty_weight, "no": 0.0}
    return verdict_share(statements, labels, credit, scale, per="statements")


def _reason_prompt(
    question: str, answer: str, verdicts: Sequence[RelevancyVerdict], score: float, scale: float
) -> str:
    lines = [f"- [{v.result}] {v.statement}: {v.reason}" for v in verdicts]
    return fenced(
        lambda data: (
            f"""Explain in two or three sentences why the answer's relevancy score is {score} \
(out of {scale}). Start with "The score is {score} because".

Question:
{data(question)}

Answer:
{data(answer)}

Verdicts per statement:
{data(chr(10).join(lines))}"""
        )
    )


def create_answer_relevancy_scorer(
    model: str | Judge,
    options: AnswerRelevancyOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """Share of the answer's statements that address the question, in [0, scale].

    Score: ``((yes + uncertainty_weight × unsure) / statements) × scale``; an empty answer scores 0, and the
    judge must find at least one statement in a non-empty answer.
    Options merge key by key with the defaults.

    >>> scorer = create_answer_relevancy_scorer("openai/gpt-4o-mini", scale=10)
    >>> scorer.id
    'answer_relevancy'
    """
    opts = merge_options(AnswerRelevancyOptions, options, option_kwargs)
    return build_claim_verdict_scorer(
        id="answer_relevancy",
        name="Answer Relevancy",
        description="How well the answer addresses the question",
        model=model,
        instructions=INSTRUCTIONS,
        scale=opts.scale,
        extract=PromptStep("Split the answer into statements", _statements_prompt, _statements_schema),
        check=PromptStep("Judge each statement's relevance", _verdicts_prompt, _verdicts_schema),
        items=lambda run, results: results.preprocess_step_result.statements,
        verdicts=lambda results: results.analyze_step_result.results,
        formula=lambda statements, verdicts, scale: answer_relevancy_score(
            statements, verdicts, opts.uncertainty_weight, scale
        ),
        reason_prompt=lambda run, results, score: _reason_prompt(
            query_text(run), response_text(run), results.analyze_step_result.results, score, opts.scale
        ),
        nothing_to_judge="the answer is empty and contains no statements to judge.",
    )
