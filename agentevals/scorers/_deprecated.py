"""Old public names of the prebuilt scorers: still importable, with one ``DeprecationWarning`` each.

The names are served by a module ``__getattr__`` (PEP 562), so they stay out of ``__all__`` and
``dir()``. Each getter imports lazily: the packages that use this module are still initialising.
"""

from __future__ import annotations

import functools
import importlib
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Renamed:
    """An old name: ``new`` is the spelling to use now, ``get()`` returns what the old name gave."""

    new: str
    get: Callable[[], Any]


_warned: set[str] = set()


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """One ``DeprecationWarning`` per old name per process, naming the new spelling."""
    if old in _warned:
        return
    _warned.add(old)
    warnings.warn(f"{old} is deprecated; use {new} instead", DeprecationWarning, stacklevel=stacklevel)


def module_getattr(module: str, renamed: Mapping[str, Renamed]) -> Callable[[str], Any]:
    """A PEP 562 ``__getattr__`` for ``module`` that serves its old names."""

    def __getattr__(name: str) -> Any:
        entry = renamed.get(name)
        if entry is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warn_renamed(f"{module}.{name}", entry.new)
        return entry.get()

    return __getattr__


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
