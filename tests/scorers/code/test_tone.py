"""create_tone_scorer: Mastra's tests as Python twins (with recorded values) for both modes."""

from __future__ import annotations

import pytest

from agentevals import ScorerError, ScoreResult
from agentevals.scorers import create_tone_scorer
from agentevals.scorers.utils import create_agent_test_run, create_test_message

stability = create_tone_scorer()


def _result(output: str, reference_tone: str | None = None) -> ScoreResult:
    run = create_agent_test_run(
        input_messages=[create_test_message("ignored", role="user")],
        output=[create_test_message(output, role="assistant")],
    )
    return create_tone_scorer(reference_tone).run_sync(run)


def test_identity() -> None:
    assert stability.id == "tone" and stability.type == "agent"


def test_reference_mode_similar_sentiment() -> None:
    result = _result(
        "This product is wonderful and fantastic!", reference_tone="I love this amazing product!"
    )
    found = result.preprocess_step_result
    # wonderful 4 + fantastic 4 over 6 tokens; love 3 + amazing 4 over 5 tokens
    assert found["response_sentiment"] == 8 / 6
    assert found["reference_sentiment"] == 7 / 5
    assert found["difference"] == pytest.approx(1 / 15)
    assert result.score == pytest.approx(14 / 15)


def test_reference_mode_opposite_sentiment() -> None:
    result = _result("This is excellent and amazing!", reference_tone="This is terrible and disappointing.")
    found = result.preprocess_step_result
    assert found["response_sentiment"] > 0 > found["reference_sentiment"]
    assert result.score == 0.0


def test_reference_mode_neutral() -> None:
    result = _result("Trees are tall. Water is wet.", reference_tone="The sky is blue. The grass is green.")
    assert result.score == 1.0 and result.preprocess_step_result["difference"] == 0.0


@pytest.mark.parametrize(
    ("output", "score"),
    [  # recorded from @mastra/evals 1.10.2
        ("I love this product! It works amazingly well. The features are fantastic.", 0.8194444444444444),
        ("This is terrible. It never works properly. The support is awful.", 0.8194444444444444),
        (
            "This is amazing! But it has terrible flaws. Yet somehow I love it. Though it frustrates me.",
            0.16479166666666678,
        ),
        ("This is a great product.", 1.0),
        ("The sky is blue. The grass is green. The tree is tall.", 1.0),
        ("I 😍 this, but 😭 about the price. Not bad overall!", 0.859375),
    ],
)
def test_stability_mode_recorded_scores(output: str, score: float) -> None:
    assert _result(output).score == score


def test_stability_mode_fields() -> None:
    found = _result("This is a great product.").preprocess_step_result
    assert found == {"score": 1.0, "avg_sentiment": 0.6, "sentiment_variance": 0.0}
    empty = _result("").preprocess_step_result
    assert empty == {"score": 1.0, "avg_sentiment": 0.0, "sentiment_variance": 0.0}


def test_recorded_reference_scores() -> None:
    reference = "I am very happy and grateful."
    assert _result("I love this amazing product!", reference).score == 0.6000000000000001
    remote = (
        "Remote work gives employees flexibility and saves commuting time, while employers save on office "
        "costs. Drawbacks include isolation and communication challenges."
    )
    assert _result(remote, reference).score == 0.09523809523809523


def test_reference_tone_must_be_text() -> None:
    with pytest.raises(ValueError, match="non-empty string"):
        create_tone_scorer("  ")


def test_none_output_is_a_clear_error() -> None:
    with pytest.raises(ScorerError, match=r"run\.output is None"):
        stability.run_sync(input="x", output=None)


def test_100_kb_output() -> None:
    text = "Good day. Bad day. " * 5_300
    result = stability.run_sync(input="", output=text)
    # sentences alternate +1.5 and -1.5: mean 0, variance 2.25 → clamped to 0
    assert result.preprocess_step_result["avg_sentiment"] == 0.0
    assert result.score == 0.0
