"""Answer relevancy: how much of the answer addresses the question."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from agentevals._model._run import Run
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep, StepResults
from agentevals.scorers.llm._common import (
    check_number,
    check_scale,
    expect_count,
    make_judge,
    merge_options,
    numbered,
    query_text,
    reason_step,
    response_text,
    scaled,
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
    reason: str


class RelevancyVerdicts(BaseModel):
    results: list[RelevancyVerdict]


def _statements_prompt(run: Run) -> str:
    return f"""Split the answer below into standalone statements.
- Split compound sentences joined by "and" into separate statements.
- A one-word answer is one statement; an error message is one statement.
- Keep each statement's meaning intact; do not add or judge anything.
- If the answer is empty, return an empty list.

Answer:
{response_text(run)}

Return {{"statements": [...]}}."""


def _verdicts_prompt(run: Run, results: StepResults) -> str:
    statements = results.preprocess_step_result.statements
    return f"""Decide for each statement whether it addresses the question.
- "yes": it directly answers or supports answering the question.
- "unsure": it is on topic but only partly answers it, or is on topic yet looks incorrect.
- "no": it is off topic, empty, or an error message.
Do not judge factual correctness.

Question:
{query_text(run)}

Statements:
{numbered(statements)}

Return {{"results": [{{"statement", "result", "reason"}}, ...]}} with exactly one entry per statement, in
the same order ({len(statements)} entries)."""


def create_answer_relevancy_scorer(
    model: str | Judge,
    options: AnswerRelevancyOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """Share of the answer's statements that address the question, in [0, scale].

    Score: ``((yes + uncertainty_weight × unsure) / statements) × scale``; an empty answer scores 0.
    Options merge key by key with the defaults.

    >>> scorer = create_answer_relevancy_scorer("openai/gpt-4o-mini", scale=10)
    >>> scorer.id
    'answer_relevancy'
    """
    opts = merge_options(AnswerRelevancyOptions, options, option_kwargs)
    judge = make_judge(model, INSTRUCTIONS)

    def score(results: StepResults) -> float:
        statements = results.preprocess_step_result.statements
        verdicts = expect_count(
            results.analyze_step_result.results, len(statements), what="verdicts", per="statements"
        )
        if not statements:
            return 0.0
        credit = {"yes": 1.0, "unsure": opts.uncertainty_weight, "no": 0.0}
        return scaled(sum(credit[v.result] for v in verdicts) / len(statements), opts.scale)

    def reason_prompt(run: Run, results: StepResults, score: float) -> str:
        lines = [f"- [{v.result}] {v.statement}: {v.reason}" for v in results.analyze_step_result.results]
        return f"""Explain in two or three sentences why the answer's relevancy score is {score} (out of \
{opts.scale}). Start with "The score is {score} because".

Question: {query_text(run)}
Answer: {response_text(run)}
Verdicts per statement:
{chr(10).join(lines)}"""

    def fixed(run: Run, results: StepResults, score: float) -> str | None:
        if results.preprocess_step_result.statements:
            return None
        return f"The score is {score} because the answer contains no statements to judge."

    return (
        create_scorer(
            id="answer_relevancy",
            name="Answer Relevancy",
            description="How well the answer addresses the question",
            judge=judge,
            score_range=(0, opts.scale),
            type="agent",
        )
        .preprocess(PromptStep("Split the answer into statements", _statements_prompt, Statements))
        .analyze(PromptStep("Judge each statement's relevance", _verdicts_prompt, RelevancyVerdicts))
        .generate_score(score)
        .generate_reason(reason_step(judge, reason_prompt, fixed))
    )
