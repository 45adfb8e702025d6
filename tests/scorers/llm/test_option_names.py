"""One option name per concept: ``context`` / ``get_context``, ``source`` / ``get_source``."""

from __future__ import annotations

import pytest

from agentevals.scorers.llm import (
    FaithfulnessOptions,
    create_context_precision_scorer,
    create_faithfulness_scorer,
    create_summarization_scorer,
)
from agentevals.scorers.llm._common import merge_options
from agentevals.scorers.llm._summarization import SummarizationOptions

MODEL = "openai/gpt-4o-mini"


def docs(run: object) -> list[str]:
    return ["doc"]


def test_every_dynamic_option_is_named_get_something() -> None:
    assert merge_options(FaithfulnessOptions, None, {"get_context": docs}).get_context is docs
    assert merge_options(SummarizationOptions, None, {"get_source": docs}).get_source is docs


@pytest.mark.parametrize(
    ("old", "new", "factory"),
    [
        ("context_extractor", "get_context", create_context_precision_scorer),
        ("context_extractor", "get_context", create_faithfulness_scorer),
        ("source_extractor", "get_source", create_summarization_scorer),
        ("contextExtractor", "get_context", create_faithfulness_scorer),
    ],
)
def test_a_renamed_option_is_an_error_naming_the_new_one(old: str, new: str, factory: object) -> None:
    with pytest.raises(ValueError, match=f"unknown option '{old}'.*it was renamed '{new}'"):
        factory(MODEL, **{old: docs})  # type: ignore[operator]
    with pytest.raises(ValueError, match=f"it was renamed '{new}'"):
        factory(MODEL, {old: docs})  # type: ignore[operator]


def test_a_camel_case_key_is_an_error_naming_the_snake_case_one() -> None:
    with pytest.raises(ValueError, match=r"unknown option 'maxQuestions'.*it was renamed 'max_questions'"):
        merge_options(SummarizationOptions, {"maxQuestions": 3}, {})


def test_unknown_options_still_fail_with_the_valid_names() -> None:
    with pytest.raises(ValueError, match=r"unknown option 'fetch_context'.*get_context"):
        create_faithfulness_scorer(MODEL, fetch_context=docs)
