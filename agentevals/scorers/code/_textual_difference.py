"""Textual difference: LCS similarity ratio of input and output, with change counts."""

from __future__ import annotations

from typing import Any

from agentevals._model._run import Run
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import StepResults
from agentevals.scorers._plain import as_dict
from agentevals.scorers._run_text import input_text, output_text
from agentevals.scorers._text import textual_difference

_ID = "textual_difference"


def _preprocess(run: Run) -> dict[str, Any]:
    found = as_dict(textual_difference(input_text(run, _ID), output_text(run, _ID)))
    if not found["approximate"]:  # only huge, very different texts get an estimated ratio
        del found["approximate"]
    return found


def _score(results: StepResults) -> float:
    ratio: float = results.preprocess_step_result["ratio"]
    return ratio


def _reason(results: StepResults) -> str:
    found = results.preprocess_step_result
    estimated = (
        " (estimated: texts too large and too different for an exact ratio)" if "approximate" in found else ""
    )
    return (
        f"Similarity ratio {found['ratio']:.2f}{estimated}: {found['changes']} word-level change(s), "
        f"length difference {found['length_diff']:.2f}"
    )


def create_textual_difference_scorer() -> Scorer:
    """Score ``2·LCS / (len(input) + len(output))``, the character-level similarity ratio.

    Also records ``changes`` (word-level edits), ``length_diff`` (relative length difference) and
    ``confidence`` (``1 - length_diff``); see :func:`agentevals.scorers._text.textual_difference`.
    Case and whitespace count. Equal texts score 1; exactly one empty text scores 0. Texts too large
    and too different for an exact LCS in bounded time get a lower-bound ratio and
    ``approximate: True`` in the step result.

    >>> result = create_textual_difference_scorer().run_sync(
    ...     input="The quick brown fox", output="The quick brown cat")
    >>> round(result.score, 4), result.preprocess_step_result["changes"]
    (0.8421, 1)
    """
    return (
        create_scorer(
            id=_ID,
            name="Textual Difference Scorer",
            description="Character-level similarity ratio (longest common subsequence) of input and output",
            type="agent",
        )
        .preprocess(_preprocess)
        .generate_score(_score)
        .generate_reason(_reason)
    )
