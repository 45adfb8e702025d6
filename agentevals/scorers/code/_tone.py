"""Tone: sentiment stability across the output's sentences, or closeness to a reference tone."""

from __future__ import annotations

from typing import Any

from agentevals._model._run import Run
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import StepResults
from agentevals.scorers._run_text import output_text
from agentevals.scorers._text import comparative_sentiment, sentence_split

_ID = "tone"


def tone_stability(text: str) -> dict[str, Any]:
    """``score`` ``max(0, 1 - variance)`` of the sentences' sentiments, with ``avg_sentiment`` and
    ``sentiment_variance``.

    >>> tone_stability("I love it. I hate it.")["score"]  # sentiments 1 and -1: variance 1
    0.0
    """
    sentiments = [comparative_sentiment(sentence) for sentence in sentence_split(text)]
    average = sum(sentiments) / len(sentiments)
    variance = sum((s - average) ** 2 for s in sentiments) / len(sentiments)
    return {"score": max(0.0, 1 - variance), "avg_sentiment": average, "sentiment_variance": variance}


def tone_closeness(response: float, reference: float) -> dict[str, Any]:
    """``score`` ``max(0, 1 - |response - reference|)`` of two sentiments, with the ``difference``.

    >>> tone_closeness(0.5, -0.25)
    {'score': 0.25, 'response_sentiment': 0.5, 'reference_sentiment': -0.25, 'difference': 0.75}
    """
    difference = abs(response - reference)
    return {
        "score": max(0.0, 1 - difference),
        "response_sentiment": response,
        "reference_sentiment": reference,
        "difference": difference,
    }


def _tone(run: Run, reference: float | None) -> dict[str, Any]:
    text = output_text(run, _ID)
    return (
        tone_stability(text) if reference is None else tone_closeness(comparative_sentiment(text), reference)
    )


def _score(results: StepResults) -> float:
    value: float = results.preprocess_step_result["score"]
    return value


def _reason(results: StepResults) -> str:
    found = results.preprocess_step_result
    if "difference" not in found:
        return (
            f"Sentiment variance {found['sentiment_variance']:.2f} across the output's sentences "
            f"(average sentiment {found['avg_sentiment']:.2f})"
        )
    return (
        f"Output sentiment {found['response_sentiment']:.2f}, reference tone "
        f"{found['reference_sentiment']:.2f}: a difference of {found['difference']:.2f}"
    )


def create_tone_scorer(reference_tone: str | None = None) -> Scorer:
    """Score the tone of the output with AFINN-165 comparative sentiment (only the output is read).

    * With ``reference_tone``: ``max(0, 1 - |sentiment(output) - sentiment(reference_tone)|)``;
      results ``response_sentiment``, ``reference_sentiment``, ``difference``.
    * Without: the output is split into sentences (``[^.!?]+[.!?]+``) and the score is
      ``max(0, 1 - variance)`` of their sentiments; results ``avg_sentiment``,
      ``sentiment_variance``. A steady tone, cheerful or grim, scores high.

    The reason gives the sentiments the score comes from. Sentiment is the ``comparative`` value of the
    npm ``sentiment`` package (score / tokens); see :mod:`agentevals.scorers._text.sentiment`.

    >>> create_tone_scorer().run_sync(input="", output="This is a great product.").score
    1.0
    >>> create_tone_scorer(reference_tone="I love it").run_sync(input="", output="I hate it").score
    0.0
    """
    if reference_tone is not None and (not isinstance(reference_tone, str) or not reference_tone.strip()):
        raise ValueError("reference_tone must be a non-empty string, or None to score tone stability")
    reference = None if reference_tone is None else comparative_sentiment(reference_tone)

    mode = "closeness to a reference tone" if reference_tone is not None else "stability across sentences"
    return (
        create_scorer(
            id=_ID,
            name="Tone Scorer",
            description=f"Sentiment of the output: {mode}",
            type="agent",
        )
        .preprocess(lambda run: _tone(run, reference))
        .generate_score(_score)
        .generate_reason(_reason)
    )
