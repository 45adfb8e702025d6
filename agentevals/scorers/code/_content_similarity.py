"""Content similarity: character-bigram Dice similarity of input and output."""

from __future__ import annotations

from typing import Any

from agentevals._model._run import Run
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import StepResults
from agentevals.scorers._run_text import input_text, output_text
from agentevals.scorers._text import dice_similarity
from agentevals.scorers._text._js import collapse_whitespace

_ID = "content_similarity"


def _processed(run: Run, ignore_case: bool, ignore_whitespace: bool) -> dict[str, Any]:
    processed_input, processed_output = input_text(run, _ID), output_text(run, _ID)
    if ignore_case:
        processed_input, processed_output = processed_input.lower(), processed_output.lower()
    if ignore_whitespace:
        processed_input = collapse_whitespace(processed_input)
        processed_output = collapse_whitespace(processed_output)
    return {"processed_input": processed_input, "processed_output": processed_output}


def _score(results: StepResults) -> float:
    texts = results.preprocess_step_result
    return dice_similarity(texts["processed_input"], texts["processed_output"])


def _reason(score: float) -> str:
    if score == 0:
        return "The input and output texts share no character pairs (Dice similarity 0)"
    return f"Dice similarity {score:.2f} of the input's and the output's character pairs"


def create_content_similarity_scorer(*, ignore_case: bool = True, ignore_whitespace: bool = True) -> Scorer:
    """Score the Sørensen–Dice similarity of the input and output texts' character bigrams.

    The comparison is ``compareTwoStrings`` of the npm package ``string-similarity`` (see
    :func:`agentevals.scorers._text.dice_similarity`), which removes all whitespace itself, so
    ``ignore_whitespace`` (collapse runs of whitespace, trim) mostly affects the recorded
    ``processed_input``/``processed_output``. Each option has its own default: passing
    ``ignore_case=False`` keeps ``ignore_whitespace=True``.

    >>> scorer = create_content_similarity_scorer()
    >>> scorer.run_sync(input="The Quick Brown Fox", output="the quick brown fox").score
    1.0
    >>> create_content_similarity_scorer(ignore_case=False).run_sync(
    ...     input="The Quick Brown Fox", output="the quick brown fox").score
    0.5333333333333333
    """
    if not isinstance(ignore_case, bool) or not isinstance(ignore_whitespace, bool):
        raise TypeError("ignore_case and ignore_whitespace must be True or False")

    return (
        create_scorer(
            id=_ID,
            name="Content Similarity Scorer",
            description="Character-bigram (Sørensen–Dice) similarity between input and output",
            type="agent",
        )
        .preprocess(lambda run: _processed(run, ignore_case, ignore_whitespace))
        .generate_score(_score)
        .generate_reason(_reason)
    )
