"""Old public names of the prebuilt scorers: still importable, with one ``DeprecationWarning`` each."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from typing import Any

from agentevals._deprecation import Renamed, module_getattr, warn_renamed

__all__ = ["LLM_RENAMED", "SCORERS_RENAMED", "Renamed", "module_getattr", "warn_renamed"]


def _factory(module: str, name: str) -> Callable[[], Any]:
    return lambda: getattr(importlib.import_module(module), name)


def _instance(name: str) -> Callable[[], Any]:
    """A getter for an old ready scorer: one instance, built by its new factory on first use."""
    return functools.cache(lambda: getattr(importlib.import_module("agentevals.scorers.code"), name)())


_LLM = "agentevals.scorers.llm"

LLM_RENAMED: Mapping[str, Renamed] = {
    f"create_{measure}_scorer_llm": Renamed(
        f"{_LLM}.create_{measure}_scorer", _factory(_LLM, f"create_{measure}_scorer")
    )
    for measure in ("context_relevance", "noise_sensitivity", "prompt_alignment")
}
"""Old names in ``agentevals.scorers.llm``."""

SCORERS_RENAMED: Mapping[str, Renamed] = {
    **{
        f"{measure}": Renamed(
            f"agentevals.scorers.create_{measure}_scorer()", _instance(f"create_{measure}_scorer")
        )
        for measure in ("exact_match", "includes", "levenshtein", "json_match")
    },
    "regex": Renamed(
        "agentevals.scorers.create_regex_scorer", _factory("agentevals.scorers.code", "create_regex_scorer")
    ),
    "factuality": Renamed(
        "agentevals.scorers.create_factuality_scorer", _factory(f"{_LLM}._factuality", "old_factuality")
    ),
    "create_trajectory_scorer_code": Renamed(
        "agentevals.scorers.create_trajectory_scorer",
        _factory("agentevals.scorers.trajectory", "create_trajectory_scorer"),
    ),
    **{
        name: Renamed(entry.new.replace(_LLM, "agentevals.scorers"), entry.get)
        for name, entry in LLM_RENAMED.items()
    },
}
"""Old names in ``agentevals.scorers``."""
