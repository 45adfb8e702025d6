"""create_completeness_scorer: Python twins of Mastra's tests and docs, plus edge cases."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentevals import Run, ScorerError
from agentevals.scorers import create_completeness_scorer
from agentevals.scorers.utils import create_agent_test_run, create_test_message

scorer = create_completeness_scorer()


def _run(input: str, output: str) -> Run:
    return create_agent_test_run(
        input_messages=[create_test_message(input, role="user")],
        output=[create_test_message(output, role="assistant")],
    )


def test_identity() -> None:
    assert scorer.id == "completeness" and scorer.name == "Completeness Scorer"
    assert scorer.type == "agent"
    assert [s.name for s in scorer.steps] == ["preprocess", "generate_score", "generate_reason"]


def test_identical_text_scores_one() -> None:
    text = "The quick brown fox jumps over the lazy dog"
    result = scorer.run_sync(_run(text, text))
    assert result.score == 1.0
    assert result.preprocess_step_result["element_counts"] == {"input": 8, "output": 8}
    assert result.reason == "The output covers 8 of 8 input elements."


def test_simplified_text_misses_elements() -> None:
    # @mastra/evals 1.10.2 scores this 0.625 too (recorded under node 20).
    result = scorer.run_sync(
        _run("The quick brown fox jumps over the lazy dog", "The fox jumps over the dog")
    )
    assert result.score == 0.625
    found = result.preprocess_step_result
    assert found["missing_elements"] == ["quick", "brown", "lazy"]
    assert result.reason == "The output covers 5 of 8 input elements. Missing: quick, brown, lazy."


@pytest.mark.parametrize(
    ("input", "output", "expected"),
    [  # exact scores recorded from @mastra/evals 1.10.2, which ours reproduce
        ("The weather is sunny today", "I like to eat pizza", 0.0),
        ("apples, oranges, and bananas", "apples and bananas", 0.75),
        ("cat cat cat cats", "cat cats", 1.0),
        ("The quick brown fox", "The quick brown cat", 0.75),
        ("The 123 quick 456 brown fox", "The quick brown fox", 2 / 3),
        ("Paris is the capital of France", "The capital of France is Paris", 1.0),
        ("The cat sat on the mat.", "The cat sat on a mat", 1.0),
    ],
)
def test_recorded_mastra_scores(input: str, output: str, expected: float) -> None:
    assert scorer.run_sync(_run(input, output)).score == expected


def test_fuzzy_matches_are_not_reported_missing() -> None:
    result = scorer.run_sync(_run("cats", "cat"))
    assert result.score == 1.0  # cat/cats: 3/4 > 0.6
    assert result.preprocess_step_result["missing_elements"] == []  # Mastra would list "cats"


def test_multi_paragraph_text() -> None:
    original = (
        "First paragraph about AI.\n        Second paragraph about ML.\n        Third paragraph about DL."
    )
    simplified = "First para about AI.\n        Second para about ML."
    result = scorer.run_sync(_run(original, simplified))
    assert result.score == 0.625
    assert result.preprocess_step_result["missing_elements"] == ["paragraph", "third", "dl"]


def test_empty_texts() -> None:
    both = scorer.run_sync(_run("", ""))
    assert both.score == 1.0
    assert both.preprocess_step_result["element_counts"] == {"input": 0, "output": 0}
    assert scorer.run_sync(_run("", "some text")).score == 0.0
    assert scorer.run_sync(_run("   \n  ", "  \n  ")).score == 1.0
    assert scorer.run_sync(_run("Hello", "")).score == 0.0


def test_none_input_or_output_is_a_clear_error() -> None:
    with pytest.raises(ScorerError, match="Inputs cannot be null or undefined"):
        scorer.run_sync(input=None, output="text")
    with pytest.raises(ScorerError, match="Inputs cannot be null or undefined"):
        scorer.run_sync(input="text", output=None)
    with pytest.raises(ValidationError):  # a message whose content is None is rejected up front
        _run("text", None)  # type: ignore[arg-type]


def test_all_input_and_output_messages_are_used() -> None:
    run = create_agent_test_run(
        input_messages=["Explain recursion", "with an example"],
        output=[
            create_test_message("", role="assistant"),  # a tool-only turn adds nothing
            create_test_message("Recursion: a function calls itself.", role="assistant"),
            create_test_message("Example: factorial.", role="assistant"),
        ],
    )
    found = scorer.run_sync(run).preprocess_step_result
    assert found["input_elements"] == ["explain", "recursion", "with", "an", "example"]
    assert found["missing_elements"] == ["explain", "with", "an"]


def test_plain_string_run() -> None:
    assert scorer.run_sync(input="Paris is nice", output="paris is nice").score == 1.0


def test_unicode_and_camel_case() -> None:
    assert scorer.run_sync(input="Café résumé", output="cafe resume").score == 1.0
    # Mastra reads "getUserName" as one element and scores this 0; the split makes it 2/3.
    result = scorer.run_sync(input="getUserName", output="the user name")
    assert result.score == pytest.approx(2 / 3)
    assert scorer.run_sync(input="東京は日本", output="東京").score == 0.4  # Mastra: 1 (no elements at all)


def test_100_kb_inputs() -> None:
    sentence = "The analytics team reviewed quarterly revenue and customer churn carefully. "
    text = sentence * (100_000 // len(sentence) + 1)
    result = scorer.run_sync(input=text, output=text.replace("churn", "retention"))
    assert result.preprocess_step_result["missing_elements"] == ["churn"]
    assert result.score == pytest.approx(1 - 1 / result.preprocess_step_result["element_counts"]["input"])


async def test_async_run() -> None:
    result = await scorer.run(input="The quick brown fox", output="The quick brown fox")
    assert result.score == 1.0


def test_docs_example_inputs_score_against_a_partial_answer() -> None:
    # The API reference runs these prompts through an agent; here a fixed answer stands in for it.
    question = "Explain the process of photosynthesis, including the inputs, outputs, and stages involved."
    answer = (
        "Photosynthesis turns light, water and carbon dioxide into glucose and oxygen. "
        "Its stages are the light-dependent reactions and the Calvin cycle."
    )
    result = scorer.run_sync(input=question, output=answer)
    assert 0 < result.score < 1
    assert {"explain", "process", "inputs"} <= set(result.preprocess_step_result["missing_elements"])
