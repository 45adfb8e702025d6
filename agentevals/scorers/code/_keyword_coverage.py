"""Keyword coverage: the share of the input's keywords that the output repeats."""

from __future__ import annotations

from typing import Any

from agentevals._model._run import Run
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import StepResults
from agentevals.scorers._run_text import input_text, output_text
from agentevals.scorers._text import extract_keywords

_ID = "keyword_coverage"


def _preprocess(run: Run) -> dict[str, Any]:
    return {
        "reference_keywords": extract_keywords(input_text(run, _ID)),
        "response_keywords": extract_keywords(output_text(run, _ID)),
    }


def _analyze(results: StepResults) -> dict[str, Any]:
    keywords = results.preprocess_step_result
    response = set(keywords["response_keywords"])
    reference = keywords["reference_keywords"]
    missing = [k for k in reference if k not in response]
    return {
        "total_keywords_length": len(reference),
        "matched_keywords_length": len(reference) - len(missing),
        "missing_keywords": missing,
    }


def _score(results: StepResults) -> float:
    counts = results.analyze_step_result
    total: int = counts["total_keywords_length"]
    return 1.0 if total == 0 else counts["matched_keywords_length"] / total


def _reason(results: StepResults) -> str:
    counts = results.analyze_step_result
    total, missing = counts["total_keywords_length"], counts["missing_keywords"]
    if total == 0:
        return "The input has no keywords, so there is nothing to cover."
    text = f"The output repeats {total - len(missing)} of the input's {total} keywords."
    return text + (f" Missing: {', '.join(missing)}." if missing else "")


def create_keyword_coverage_scorer() -> Scorer:
    """Score the share of the input's keywords that also appear in the output.

    Keywords follow the npm ``keyword-extractor`` rules (English SMART stop words removed, digits
    dropped, lower-cased, hyphenated words kept whole; see
    :func:`agentevals.scorers._text.extract_keywords`). Matching is exact after lower-casing. An
    input without keywords scores 1. Results: ``reference_keywords`` and ``response_keywords``
    (lists in order of appearance), then ``total_keywords_length``, ``matched_keywords_length``
    and ``missing_keywords``.

    >>> result = create_keyword_coverage_scorer().run_sync(
    ...     input="The quick brown fox jumps over the lazy dog",
    ...     output="A quick brown fox runs past a sleeping cat")
    >>> result.score, result.analyze_step_result["missing_keywords"]
    (0.5, ['jumps', 'lazy', 'dog'])
    """
    return (
        create_scorer(
            id=_ID,
            name="Keyword Coverage Scorer",
            description="Share of the input's keywords (stop words removed) found in the output",
            type="agent",
        )
        .preprocess(_preprocess)
        .analyze(_analyze)
        .generate_score(_score)
        .generate_reason(_reason)
    )
