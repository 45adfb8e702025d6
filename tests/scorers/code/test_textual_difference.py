"""create_textual_difference_scorer: Mastra's tests as Python twins with recorded exact values."""

from __future__ import annotations

import pytest

from agentevals import ScorerError, ScoreResult
from agentevals.scorers import create_textual_difference_scorer
from agentevals.scorers.utils import create_agent_test_run, create_test_message

scorer = create_textual_difference_scorer()


def _result(input: str, output: str) -> ScoreResult:
    run = create_agent_test_run(
        input_messages=[create_test_message(input, role="user")],
        output=[create_test_message(output, role="assistant")],
    )
    return scorer.run_sync(run)


def test_identity() -> None:
    assert scorer.id == "textual_difference" and scorer.type == "agent"


def test_identical_strings() -> None:
    result = _result("The quick brown fox", "The quick brown fox")
    assert result.score == 1.0
    assert result.preprocess_step_result == {
        "ratio": 1.0,
        "changes": 0,
        "length_diff": 0.0,
        "confidence": 1.0,
    }


@pytest.mark.parametrize(
    ("input", "output", "score", "changes"),
    [  # scores recorded from @mastra/evals 1.10.2
        ("The quick brown fox", "The quick brown cat", 0.8421052631578947, 1),
        ("The quick brown fox", "The very quick brown fox", 0.8837209302325582, 1),
        ("The quick brown fox jumps", "The quick fox jumps", 0.8636363636363636, 1),
        (
            "The quick brown fox jumps over the lazy dog",
            "The slow black fox runs under the active cat",
            0.5287356321839081,
            6,
        ),
        ("The quick brown fox", "Lorem ipsum dolor sit amet", 0.26666666666666666, 5),
        ("The Quick Brown Fox", "the quick brown fox", 0.7894736842105263, 4),
        ("The   quick\nbrown    fox", "The quick brown fox", 0.8372093023255814, 1),
    ],
)
def test_recorded_mastra_cases(input: str, output: str, score: float, changes: int) -> None:
    result = _result(input, output)
    assert result.score == score
    assert result.preprocess_step_result["changes"] == changes


def test_empty_strings() -> None:
    both = _result("", "")
    assert both.score == 1.0 and both.preprocess_step_result["changes"] == 0
    one = _result("The quick brown fox", "")
    assert one.score == 0.0
    assert one.preprocess_step_result == {"ratio": 0.0, "changes": 4, "length_diff": 1.0, "confidence": 0.0}


def test_length_difference_and_confidence() -> None:
    found = _result("abcd", "ab").preprocess_step_result
    assert found["length_diff"] == 0.5 and found["confidence"] == 0.5


def test_unicode() -> None:
    assert _result("😀", "😀x").score == 0.8  # UTF-16 lengths 2 and 3, as in JavaScript
    assert _result("naïve", "naive").score == 0.8


def test_none_is_a_clear_error() -> None:
    with pytest.raises(ScorerError, match=r"run\.output is None"):
        scorer.run_sync(input="x", output=None)


def test_100_kb_inputs() -> None:
    result = scorer.run_sync(input="a" * 100_000, output="a" * 50_000 + "b" * 50_000)
    assert result.score == 0.5
