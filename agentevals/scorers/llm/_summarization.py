"""Summarization: is the summary faithful to its source, and does it cover the source's key points."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._item_counts import with_item_counts
from agentevals._scoring._judge._fence import fenced
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import Invoker, PromptStep, StepResults
from agentevals.scorers.llm._common import (
    as_text,
    check_scale,
    expect_count,
    extraction_count,
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
    reason: str = ""


class AlignmentAndQuestions(BaseModel):
    alignment: list[ClaimAlignment]
    questions: list[str]


class QuestionCoverage(BaseModel):
    question: str
    answered: bool
    reason: str = ""


class Coverage(BaseModel):
    coverage: list[QuestionCoverage]


def summary_of(run: Run) -> str:
    """The last non-empty assistant message (the final summary)."""
    texts = [m.content.strip() for m in run.output_messages if m.role == "assistant" and m.content.strip()]
    return texts[-1] if texts else ""


async def _source_of(run: Run, extractor: Invoker | None, static: str | None) -> str:
    """The text the summary summarises: ``get_source``'s, else the ``source`` option, else the input."""
    if extractor is not None:
        value = await extractor(run=run, input=run.input, output=run.output)
        source = "" if value is None else as_text(value)
    else:
        source = static if static is not None else query_text(run)
    if not source.strip():
        raise SkipRun(
            "summarization needs the source text: pass source=... or get_source=..., or put the "
            "text to summarise in the run's input",
            reason="no_source",
        )
    return source.strip()


def _alignment_prompt(source: str, summary: str, max_questions: int) -> str:
    return fenced(
        lambda data: (
            f"""Two tasks on a source text and its summary.
1. Split the summary into claims; for each, say whether the source supports it.
2. Write up to {max_questions} key questions that the source answers (the points a good summary must
   cover), most important first.

Source:
{data(source)}

Summary:
{data(summary or "(empty)")}

Return {{"alignment": [{{"claim", "supported", "reason"}}], "questions": [...]}}."""
        )
    )


def _alignment_schema(summary: str, max_questions: int) -> type[AlignmentAndQuestions]:
    """At least one claim from a non-empty summary, and one to ``max_questions`` key questions from the
    source (never empty: a run without one is skipped)."""
    return with_item_counts(
        AlignmentAndQuestions, alignment=extraction_count(summary), questions=(1, max_questions)
    )


def _coverage_schema(checked: AlignmentAndQuestions, max_questions: int) -> type[Coverage]:
    return with_item_counts(Coverage, coverage=len(checked.questions[:max_questions]))


def _coverage_prompt(summary: str, checked: AlignmentAndQuestions, max_questions: int) -> str:
    questions = checked.questions[:max_questions]
    return fenced(
        lambda data: (
            f"""Using only the summary below (no other knowledge), say for each question whether
the summary answers it.

Summary:
{data(summary or "(empty)")}

Questions:
{data(numbered(questions))}

Return {{"coverage": [{{"question", "answered", "reason"}}]}} with exactly one entry per question, in
order ({len(questions)} entries)."""
        )
    )


def summary_shares(
    checked: AlignmentAndQuestions, covered: Coverage, max_questions: int
) -> tuple[float, float] | None:
    """``(alignment, coverage)``: the shares of supported claims and of the first ``max_questions``
    questions answered; ``None`` without claims or without questions.

    Fewer coverage entries than questions is a ``ValueError``; extra ones are ignored.

    >>> checked = AlignmentAndQuestions(questions=["q1", "q2", "q3"], alignment=[
    ...     ClaimAlignment(claim="c", supported=s, reason="") for s in (True, True, False, True)])
    >>> covered = Coverage(
    ...     coverage=[QuestionCoverage(question="q", answered=a, reason="") for a in (True, False)])
    >>> summary_shares(checked, covered, max_questions=2)
    (0.75, 0.5)
    """
    claims, questions = checked.alignment, checked.questions[:max_questions]
    coverage = expect_count(covered.coverage, len(questions), what="coverage entries", per="questions")
    if not claims or not questions:
        return None
    alignment = sum(c.supported for c in claims) / len(claims)
    return alignment, sum(c.answered for c in coverage) / len(questions)


def summarization_score(
    checked: AlignmentAndQuestions, covered: Coverage, max_questions: int, scale: float
) -> float:
    """The lower of the alignment and coverage shares (see ``summary_shares``) × ``scale``; 0 without
    claims or questions."""
    shares = summary_shares(checked, covered, max_questions)
    return 0.0 if shares is None else scaled(min(shares), scale)


def _reason_prompt(
    checked: AlignmentAndQuestions, covered: Coverage, max_questions: int, score: float, scale: float
) -> str:
    shares = summary_shares(checked, covered, max_questions)
    assert shares is not None
    unsupported = [c.claim for c in checked.alignment if not c.supported]
    unanswered = [c.question for c in covered.coverage if not c.answered]
    return fenced(
        lambda data: (
            f"""Explain in two or three sentences why the summary scored {score} (out of {scale}):
the score is the lower of alignment ({shares[0]:.2f}, claims supported by the source) and coverage
({shares[1]:.2f}, key questions the summary answers).

Unsupported claims:
{data(numbered(unsupported))}

Unanswered questions:
{data(numbered(unanswered))}"""
        )
    )


def create_summarization_scorer(
    model: str | Judge,
    options: SummarizationOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """``min(alignment, coverage)`` of the summary, in [0, scale].

    Alignment: share of the summary's claims the source supports. Coverage: share of up to
    ``max_questions`` key questions (drawn from the source) that the summary alone answers. The source
    is ``get_source(run)``, else ``source``, else the run's input. An empty summary scores 0; the
    judge must draw at least one key question from the source and find at least one claim in a
    non-empty summary.

    >>> create_summarization_scorer("openai/gpt-4o-mini", max_questions=5).id
    'summarization'
    """
    opts = merge_options(SummarizationOptions, options, option_kwargs)
    judge = make_judge(model, INSTRUCTIONS)
    extractor = run_hook(opts.get_source, "get_source")

    async def alignment_prompt(run: Run) -> str:
        source = await _source_of(run, extractor, opts.source)
        return _alignment_prompt(source, summary_of(run), opts.max_questions)

    def fixed(run: Run, results: StepResults, score: float) -> str | None:
        checked, covered = results.preprocess_step_result, results.analyze_step_result
        if summary_shares(checked, covered, opts.max_questions) is not None:
            return None
        return f"The score is {score} because the summary is empty, so it makes no claims."

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
                "Check summary claims and draft key questions",
                alignment_prompt,
                lambda run: _alignment_schema(summary_of(run), opts.max_questions),
            )
        )
        .analyze(
            PromptStep(
                "Check which questions the summary answers",
                lambda run, results: _coverage_prompt(
                    summary_of(run), results.preprocess_step_result, opts.max_questions
                ),
                lambda results: _coverage_schema(results.preprocess_step_result, opts.max_questions),
            )
        )
        .generate_score(
            lambda results: summarization_score(
                results.preprocess_step_result, results.analyze_step_result, opts.max_questions, opts.scale
            )
        )
        .generate_reason(
            reason_step(
                judge,
                lambda run, results, score: _reason_prompt(
                    results.preprocess_step_result,
                    results.analyze_step_result,
                    opts.max_questions,
                    score,
                    opts.scale,
                ),
                fixed,
            )
        )
    )
