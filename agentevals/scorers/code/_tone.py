"""Tone: sentiment stability across the output's sentences, or closeness to a reference tone."""

from __future__ import annotations

from typing import Any

from agentevals._model._run import Run
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import StepResults
from agentevals.scorers._run_text import output_text
from agentevals.scorers._text import comparative_sentiment, sentence_split

_ID = "tone"


def _stability(text: str) -> dict[str, Any]:
    sentiments = [comparative_sentiment(sentence) for sentence in sentence_split(text)]
    average = sum(sentiments) / len(sentiments)
    variance = sum((s - average) ** 2 for s in sentiments) / len(sentiments)
    return {"score": max(0.0, 1 - variance), "avg_sentiment": average, "sentiment_variance": variance}


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

    def preprocess(run: Run) -> dict[str, Any]:
        text = output_text(run, _ID)
        if reference is None:
            return _stability(text)
        response = comparative_sentiment(text)
        difference = abs(response - reference)
        return {
            "score": max(0.0, 1 - difference),
            "response_sentiment": response,
            "reference_sentiment": reference,
            "difference": difference,
        }

    def score(results: StepResults) -> float:
        value: float = results.preprocess_step_result["score"]
        return value

    def reason(results: StepResults) -> str:
        found = results.preprocess_step_result
        if reference is None:
            return (
                f"Sentiment variance {found['sentiment_variance']:.2f} across the output's sentences "
                f"(average sentiment {found['avg_sentiment']:.2f})"
            )
        return (
            f"Output sentiment {found['response_sentiment']:.2f}, reference tone "
            f"{found['reference_sentiment']:.2f}: a difference of {found['difference']:.2f}"
        )

    mode = "closeness to a reference tone" if reference_tone is not None else "stability across sentences"
    return (
        create_scorer(
            id=_ID,
            name="Tone Scorer",
            description=f"Sentiment of the output: {mode}",
            type="agent",
        )
        .preprocess(preprocess)
        .generate_score(score)
        .generate_reason(reason)
    )
