"""create_keyword_coverage_scorer: Mastra's tests as Python twins, with recorded exact counts."""

from __future__ import annotations

import pytest

from agentevals import ScorerError, ScoreResult
from agentevals.scorers import create_keyword_coverage_scorer
from agentevals.scorers.utils import create_agent_test_run, create_test_message

scorer = create_keyword_coverage_scorer()


def _result(input: str, output: str) -> ScoreResult:
    run = create_agent_test_run(
        input_messages=[create_test_message(input, role="user")],
        output=[create_test_message(output, role="assistant")],
    )
    return scorer.run_sync(run)


def test_identity() -> None:
    assert scorer.id == "keyword_coverage" and scorer.type == "agent"
    assert [s.name for s in scorer.steps] == ["preprocess", "analyze", "generate_score", "generate_reason"]


def test_identical_text() -> None:
    result = _result(
        "The quick brown fox jumps over the lazy dog", "The quick brown fox jumps over the lazy dog"
    )
    assert result.score == 1.0
    assert result.analyze_step_result == {
        "total_keywords_length": 6,
        "matched_keywords_length": 6,
        "missing_keywords": [],
    }


def test_partial_coverage() -> None:
    result = _result(
        "The quick brown fox jumps over the lazy dog", "A quick brown fox runs past a sleeping cat"
    )
    assert result.score == 0.5
    assert result.preprocess_step_result["reference_keywords"] == [
        "quick",
        "brown",
        "fox",
        "jumps",
        "lazy",
        "dog",
    ]
    assert result.analyze_step_result["missing_keywords"] == ["jumps", "lazy", "dog"]
    assert result.reason == "The output repeats 3 of the input's 6 keywords. Missing: jumps, lazy, dog."


@pytest.mark.parametrize(
    ("input", "output", "expected"),
    [  # recorded from @mastra/evals 1.10.2
        ("The quick brown fox", "A quick brown fox", 1.0),  # stop words ignored
        ("The Quick Brown Fox", "the quick brown fox", 1.0),  # case-insensitive
        ("The 123 quick 456 brown fox", "The quick brown fox", 1.0),  # digits ignored
        ("The quick-brown fox!", "The quick brown fox", 0.5),  # hyphenated word is one keyword
        ("The quick brown fox jumps over the lazy dog", "Lorem ipsum dolor sit amet", 0.0),
        ("The quick brown fox", "", 0.0),
        ("", "some text", 1.0),  # no input keywords: nothing to cover
        ("Machine learning models require data preprocessing", "You need to clean data", 1 / 6),
    ],
)
def test_recorded_mastra_scores(input: str, output: str, expected: float) -> None:
    assert _result(input, output).score == expected


def test_empty_texts() -> None:
    result = _result("", "")
    assert result.score == 1.0
    assert result.preprocess_step_result == {"reference_keywords": [], "response_keywords": []}
    assert result.analyze_step_result["total_keywords_length"] == 0
    assert result.reason == "The input has no keywords, so there is nothing to cover."


def test_unicode_keywords() -> None:
    assert _result("Straße ΟΔΟΣ", "straße οδος").score == 1.0


def test_none_is_a_clear_error() -> None:
    with pytest.raises(ScorerError, match=r"run\.input is None"):
        scorer.run_sync(input=None, output="x")


def test_100_kb_inputs() -> None:
    text = "Alpha, beta; gamma! " * 5_000
    assert _result(text, "alpha and gamma").score == pytest.approx(2 / 3)
