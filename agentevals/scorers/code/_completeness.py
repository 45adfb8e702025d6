"""Completeness: how many of the input's content elements the output covers."""

from __future__ import annotations

from typing import Any

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import StepResults
from agentevals.scorers._run_text import input_text, output_text
from agentevals.scorers._text import coverage, extract_elements, missing_elements

_ID = "completeness"
_REASON_LIMIT = 10


def _preprocess(run: Run) -> dict[str, Any]:
    if run.input is None or run.output is None:
        raise SkipRun(
            "Inputs cannot be null or undefined: the completeness scorer needs run.input and "
            "run.output (an empty string is scored as an empty text)",
            reason="no_input" if run.input is None else "no_output",
        )
    inputs = extract_elements(input_text(run, _ID).strip())
    outputs = extract_elements(output_text(run, _ID).strip())
    return {
        "input_elements": inputs,
        "output_elements": outputs,
        "missing_elements": missing_elements(inputs, outputs),
        "element_counts": {"input": len(inputs), "output": len(outputs)},
    }


def _score(results: StepResults) -> float:
    found = results.preprocess_step_result
    return coverage(found["input_elements"], found["output_elements"])


def _reason(results: StepResults, score: float) -> str:
    found = results.preprocess_step_result
    total, missing = len(found["input_elements"]), found["missing_elements"]
    if total == 0:
        return "The input has no content elements." + (
            "" if score == 1 else " The output has some, so it adds content the input did not ask for."
        )
    text = f"The output covers {total - len(missing)} of {total} input elements."
    if missing:
        shown = ", ".join(missing[:_REASON_LIMIT]) + (", ..." if len(missing) > _REASON_LIMIT else "")
        text += f" Missing: {shown}."
    return text


def create_completeness_scorer() -> Scorer:
    """Score the share of the input's content elements (words, verbs in base form) found in the output.

    Elements are extracted with the rules documented in
    :mod:`agentevals.scorers._text.elements`; an input element counts as covered when an output
    element equals it (three characters or fewer) or contains/is contained in it with a length
    ratio above 0.6. ``missing_elements`` lists exactly the uncovered elements, so
    ``score == 1 - len(missing_elements) / element_counts["input"]``. An input with no elements
    scores 1 if the output has none either, else 0.

    >>> scorer = create_completeness_scorer()
    >>> result = scorer.run_sync(input="The quick brown fox jumps over the lazy dog",
    ...                          output="The fox jumps over the dog")
    >>> result.score, result.preprocess_step_result["missing_elements"]
    (0.625, ['quick', 'brown', 'lazy'])
    """
    return (
        create_scorer(
            id=_ID,
            name="Completeness Scorer",
            description="Share of the input's content elements (nouns, verbs in base form, terms) "
            "covered by the output",
            type="agent",
        )
        .preprocess(_preprocess)
        .generate_score(_score)
        .generate_reason(_reason)
    )
