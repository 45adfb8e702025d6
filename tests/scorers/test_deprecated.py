"""Old scorer names keep working: each warns once per process, naming the new spelling."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import pytest

import agentevals.scorers
from agentevals import Scorer, _deprecation
from agentevals.scorers._deprecated import LLM_RENAMED, SCORERS_RENAMED

OLD_NAMES = [("agentevals.scorers", name) for name in SCORERS_RENAMED] + [
    ("agentevals.scorers.llm", name) for name in LLM_RENAMED
]


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a new process would: no old name has warned yet."""
    monkeypatch.setattr(_deprecation, "_warned", set())


@pytest.mark.parametrize(("module", "old"), OLD_NAMES)
def test_old_name_works_and_warns_exactly_once(module: str, old: str) -> None:
    namespace = importlib.import_module(module)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = getattr(namespace, old)
        second = getattr(namespace, old)
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(deprecations) == 1
    message = str(deprecations[0].message)
    new = (SCORERS_RENAMED if module == "agentevals.scorers" else LLM_RENAMED)[old].new
    assert old in message and new in message
    assert deprecations[0].filename == __file__  # points at the caller's line
    assert first is second or first == second
    target = new.rpartition(".")[2].removesuffix("()")
    assert hasattr(agentevals.scorers, target)


@pytest.mark.parametrize("old", ["exact_match", "includes", "levenshtein", "json_match"])
def test_old_ready_instances_are_built_by_the_new_factory(old: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"create_{old}_scorer"):
        instance = getattr(agentevals.scorers, old)
    fresh = getattr(agentevals.scorers, f"create_{old}_scorer")()
    assert isinstance(instance, Scorer) and instance.id == fresh.id == old
    assert instance.steps == fresh.steps


def test_from_import_of_an_old_name() -> None:
    with pytest.warns(DeprecationWarning, match="create_regex_scorer"):
        from agentevals.scorers import regex
    assert regex(r"^a").run_sync(input="", output="abc").score == 1.0


def test_old_factories_keep_their_signatures() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from agentevals.scorers import create_trajectory_scorer_code, factuality
        from agentevals.scorers.llm import create_noise_sensitivity_scorer_llm

    scorer = factuality("openai/gpt-4o-mini", id="facts", scale=10)
    assert scorer.id == "facts"
    assert create_trajectory_scorer_code(defaults={"steps": ["a"]}).id == "trajectory"
    noise: Any = create_noise_sensitivity_scorer_llm(
        "openai/gpt-4o-mini", baseline_response="x", noisy_query="y"
    )
    assert noise.id == "noise_sensitivity"


def test_unknown_names_still_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = agentevals.scorers.nope  # type: ignore[attr-defined]
