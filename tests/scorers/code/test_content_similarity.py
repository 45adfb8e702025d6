"""create_content_similarity_scorer: Mastra's tests as Python twins, options merged per key."""

from __future__ import annotations

import pytest

from agentevals import ScorerError
from agentevals.scorers import create_content_similarity_scorer
from agentevals.scorers.utils import create_agent_test_run, create_test_message

scorer = create_content_similarity_scorer()


def _score(input: str, output: str, **options: bool) -> float:
    run = create_agent_test_run(
        input_messages=[create_test_message(input, role="user", id="test-input")],
        output=[create_test_message(output, role="assistant", id="test-output")],
    )
    chosen = create_content_similarity_scorer(**options) if options else scorer
    return chosen.run_sync(run).score


def test_identity() -> None:
    assert scorer.id == "content_similarity" and scorer.type == "agent"


def test_mastra_test_cases() -> None:
    assert _score("The quick brown fox", "The quick brown fox") == 1.0
    assert _score("The Quick Brown Fox", "the quick brown fox") == 1.0
    assert _score("The   quick\nbrown    fox", "The quick brown fox") == 1.0
    assert _score("The Quick Brown FOX", "the quick brown fox", ignore_case=False) == 0.4666666666666667
    assert (
        _score("The\tquick  brown\n\nfox", "The quick brown fox", ignore_case=True, ignore_whitespace=True)
        == 1.0
    )
    assert (
        _score("The\tQuick  Brown\n\nFOX", "the quick brown fox", ignore_case=False, ignore_whitespace=True)
        == 0.4666666666666667
    )
    partial = _score(
        "The quick brown fox jumps over the lazy dog", "The quick brown fox runs past the lazy dog"
    )
    assert partial == 0.7164179104477612  # recorded from @mastra/evals 1.10.2
    assert _score("The quick brown fox", "Lorem ipsum dolor sit amet") == 0.0
    assert _score("", "") == 1.0
    assert _score("The quick brown fox", "") == 0.0


def test_defaults_are_merged_per_option() -> None:
    # Mastra drops ignoreWhitespace when only ignoreCase is passed; here it stays on.
    result = create_content_similarity_scorer(ignore_case=False).run_sync(input="A  b\n", output="A b")
    assert result.preprocess_step_result == {"processed_input": "A b", "processed_output": "A b"}
    raw = create_content_similarity_scorer(ignore_whitespace=False).run_sync(input="A  b\n", output="A b")
    assert raw.preprocess_step_result == {"processed_input": "a  b\n", "processed_output": "a b"}
    assert raw.score == 1.0  # the Dice comparison removes whitespace anyway


def test_hand_computed_value() -> None:
    # night/nacht after lower-casing: one shared bigram (ht) of 4 + 4
    assert _score("Night", "Nacht") == 0.25


def test_unicode() -> None:
    assert _score("Café", "CAFÉ") == 1.0
    assert _score("café", "cafe") == pytest.approx(2 / 3)
    assert _score("😀x", "😀y") == 0.5  # emoji are UTF-16 surrogate pairs, as in JavaScript


def test_options_must_be_booleans() -> None:
    with pytest.raises(TypeError, match="True or False"):
        create_content_similarity_scorer(ignore_case="yes")  # type: ignore[arg-type]


def test_none_is_a_clear_error() -> None:
    with pytest.raises(ScorerError, match=r"run\.input is None"):
        scorer.run_sync(input=None, output="x")
    with pytest.raises(ScorerError, match=r"run\.output is None"):
        scorer.run_sync(input="x", output=None)


def test_100_kb_inputs() -> None:
    text = "abcdefghij" * 10_000
    assert scorer.run_sync(input=text, output=text[:50_000]).score == 2.0 * 49_999 / 149_998
