"""The top-level ``agentevals`` names: a small first surface; a name that moved raises naming its home."""

from __future__ import annotations

import importlib
import warnings

import pytest

import agentevals

MOVED = {
    "EngineStats": "agentevals.engine",
    "ScorerEntry": "agentevals.engine",
    "EvalItem": "agentevals.evals",
    "EvalSummary": "agentevals.evals",
    "ItemResult": "agentevals.evals",
    "ScorerStats": "agentevals.evals",
    "JudgeOutputError": "agentevals.errors",
    "RunBuildError": "agentevals.errors",
    "JudgeCall": "agentevals.results",
    "ScoreFailure": "agentevals.results",
    "SkipJudge": "agentevals.steps",
    "StepInfo": "agentevals.steps",
    "StepResults": "agentevals.steps",
    "is_scoring": "agentevals.steps",
    "messages_from_langchain": "agentevals.messages",
    "messages_from_openai": "agentevals.messages",
}


def test_the_first_surface_is_small_and_importable() -> None:
    assert 15 <= len(agentevals.__all__) <= 25
    for name in agentevals.__all__:
        assert getattr(agentevals, name) is not None
    assert not set(MOVED) & set(agentevals.__all__)


@pytest.mark.parametrize(("name", "module"), sorted(MOVED.items()))
def test_a_moved_name_raises_naming_its_home(name: str, module: str) -> None:
    with pytest.raises(ImportError, match=f"agentevals.{name} was renamed {module}.{name}"):
        getattr(agentevals, name)
    assert getattr(importlib.import_module(module), name) is not None


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        agentevals.Nope  # noqa: B018


def test_new_homes_export_what_they_list() -> None:
    for module in set(MOVED.values()) | {"agentevals.live"}:
        loaded = importlib.import_module(module)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert all(getattr(loaded, name) is not None for name in loaded.__all__)


def test_production_limits_live_with_the_engine() -> None:
    engine = importlib.import_module("agentevals.engine")
    for name in ("Budget", "BudgetUsage", "Breaker", "BreakerStatus"):
        assert name in engine.__all__ and name not in agentevals.__all__
