"""Summarization: is the summary faithful to its source, and does it cover the source's key points."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep, StepResults
from agentevals.scorers.llm._common import (
    as_text,
    check_scale,
    expect_count,
    make_judge,
    merge_options,
    numbered,
    query_text,
    reason_step,
    run_hook,
    scaled,
)

INSTRUCTIONS = (
    "You evaluate summaries: whether each claim of a summary is supported by its source, and whether "
    "the summary answers the key questions the source answers. You never use outside knowledge."
)


@dataclass(frozen=True, kw_only=True)
class SummarizationOptions:
    """``source``: the text the output summarises, or ``get_source(run)`` computing it per run (wins).

    The source is its own concept, not ``context``: the summary is judged against it as a whole
    (alignment and coverage), where context is evidence for claims. Default: the run's input.
    ``max_questions`` bounds the coverage questions, ``scale`` the score.
    """

    source: str | None = None
    get_source: Callable[..., Any] | None = None
    max_questions: int = 10
    scale: float = 1.0

    def __post_init__(self) -> None:
        if (
            isinstance(self.max_questions, bool)
            or not isinstance(self.max_questions, int)
            or self.max_questions < 1
        ):
            raise ValueError(
                f"maxQuestions must be at least 1 for Summarization scoring, got {self.max_questions!r}"
            )
        if self.source is not None and not isinstance(self.source, str):
            raise ValueError("summarization: option source must be a string")
        check_scale("summarization", self.scale)


class ClaimAlignment(BaseModel):
    claim: str
    supported: bool
    reason: str


class AlignmentAndQuestions(BaseModel):
    alignment: list[ClaimAlignment]
    questions: list[str]


class QuestionCoverage(BaseModel):
    question: str
    answered: bool
    reason: str


class Coverage(BaseModel):
    coverage: list[QuestionCoverage]


def summary_of(run: Run) -> str:
    """The last non-empty assistant message (the final summary)."""
    texts = [m.content.strip() for m in run.output_messages if m.role == "assistant" and m.content.strip()]
    return texts[-1] if texts else ""


def create_summarization_scorer(
    model: str | Judge,
    options: SummarizationOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """``min(alignment, coverage)`` of the summary, in [0, scale].

    Alignment: share of the summary's claims the source supports. Coverage: share of up to
    ``max_questions`` key questions (drawn from the source) that the summary alone answers. The source
    is ``get_source(run)``, else ``source``, else the run's input. No claims or no questions
    scores 0.

    >>> create_summarization_scorer("openai/gpt-4o-mini", max_questions=5).id
    'summarization'
    """
    opts = merge_options(SummarizationOptions, options, option_kwargs)
    judge = make_judge(model, INSTRUCTIONS)
    extractor = run_hook(opts.get_source, "get_source")

    async def source_of(run: Run) -> str:
        if extractor is not None:
            value = await extractor(run=run, input=run.input, output=run.output)
            source = "" if value is None else as_text(value)
        else:
            source = opts.source if opts.source is not None else query_text(run)
        if not source.strip():
            raise SkipRun(
                "summarization needs the source text: pass source=... or get_source=..., or put the "
                "text to summarise in the run's input",
                reason="no_source",
            )
        return source.strip()

    async def alignment_prompt(run: Run) -> str:
        return f"""Two tasks on a source text and its summary.
1. Split the summary into claims; for each, say whether the source supports it.
2. Write up to {opts.max_questions} key questions that the source answers (the points a good summary must
   cover), most important first.

Source:
{await source_of(run)}

Summary:
{summary_of(run) or "(empty)"}

Return {{"alignment": [{{"claim", "supported", "reason"}}], "questions": [...]}}."""

    def questions_of(results: StepResults) -> list[str]:
        questions: list[str] = results.preprocess_step_result.questions
        return questions[: opts.max_questions]

    def coverage_prompt(run: Run, results: StepResults) -> str:
        questions = questions_of(results)
        return f"""Using only the summary below (no other knowledge), say for each question whether the
summary answers it.

Summary:
{summary_of(run) or "(empty)"}

Questions:
{numbered(questions)}

Return {{"coverage": [{{"question", "answered", "reason"}}]}} with exactly one entry per question, in
order ({len(questions)} entries)."""

    def parts(results: StepResults) -> tuple[float, float] | None:
        claims = results.preprocess_step_result.alignment
        questions = questions_of(results)
        coverage = results.analyze_step_result.coverage
        coverage = expect_count(coverage, len(questions), what="coverage entries", per="questions")
        if not claims or not questions:
            return None
        alignment = sum(c.supported for c in claims) / len(claims)
        return alignment, sum(c.answered for c in coverage) / len(questions)

    def score(results: StepResults) -> float:
        found = parts(results)
        return 0.0 if found is None else scaled(min(found), opts.scale)

    def reason_prompt(run: Run, results: StepResults, score: float) -> str:
        found = parts(results)
        assert found is not None
        unsupported = [c.claim for c in results.preprocess_step_result.alignment if not c.supported]
        unanswered = [c.question for c in results.analyze_step_result.coverage if not c.answered]
        return f"""Explain in two or three sentences why the summary scored {score} (out of {opts.scale}):
the score is the lower of alignment ({found[0]:.2f}, claims supported by the source) and coverage
({found[1]:.2f}, key questions the summary answers).

Unsupported claims:
{numbered(unsupported)}
Unanswered questions:
{numbered(unanswered)}"""

    def fixed(run: Run, results: StepResults, score: float) -> str | None:
        if parts(results) is not None:
            return None
        return (
            f"The score is {score} because the summary has no claims or the source yields no key questions."
        )

    return (
        create_scorer(
            id="summarization",
            name="Summarization",
            description="Faithfulness and coverage of a summary",
            judge=judge,
            score_range=(0, opts.scale),
            type="agent",
        )
        .preprocess(
            PromptStep(
                "Check summary claims and draft key questions", alignment_prompt, AlignmentAndQuestions
            )
        )
        .analyze(PromptStep("Check which questions the summary answers", coverage_prompt, Coverage))
        .generate_score(score)
        .generate_reason(reason_step(judge, reason_prompt, fixed))
    )
