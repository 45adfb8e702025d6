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
def test_old_option_names_still_work_with_a_warning(old: str, new: str, factory: object) -> None:
    with pytest.warns(DeprecationWarning, match=f"option '{old}' is deprecated; use '{new}'"):
        factory(MODEL, **{old: docs})  # type: ignore[operator]
    with pytest.warns(DeprecationWarning, match=old):
        factory(MODEL, {old: docs})  # type: ignore[operator]


def test_camel_case_keys_warn_and_map_to_snake_case() -> None:
    with pytest.warns(DeprecationWarning, match="option 'maxQuestions' is deprecated; use 'max_questions'"):
        opts = merge_options(SummarizationOptions, {"maxQuestions": 3}, {})
    assert opts.max_questions == 3


def test_unknown_options_still_fail_with_the_valid_names() -> None:
    with pytest.raises(ValueError, match=r"unknown option 'fetch_context'.*get_context"):
        create_faithfulness_scorer(MODEL, fetch_context=docs)
