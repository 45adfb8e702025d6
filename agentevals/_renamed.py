"""Names that were renamed before the first release: using one raises an error naming its replacement.

One table (old qualified name → new spelling) read by a module ``__getattr__`` (PEP 562) in each
public module that lost names. Nothing here returns an old object: the table only turns an
``AttributeError`` into a message that says what to write instead. The error is an ``ImportError``,
as pydantic's removed names are, so ``from agentevals import Old`` shows the message too (the import
machinery would replace an ``AttributeError`` with its own).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NoReturn

RENAMED: Mapping[str, str] = {
    **{
        f"agentevals.{name}": f"agentevals.{module}.{name}"
        for module, names in {
            "engine": ("EngineStats", "ScorerEntry"),
            "evals": ("EvalItem", "EvalSummary", "ItemResult", "ScorerStats"),
            "errors": ("JudgeOutputError", "RunBuildError"),
            "results": ("JudgeCall", "ScoreFailure"),
            "steps": ("SkipJudge", "StepInfo", "StepResults", "is_scoring"),
            "messages": ("messages_from_langchain", "messages_from_openai"),
        }.items()
        for name in names
    },
    **{
        f"agentevals.scorers.{measure}": f"agentevals.scorers.create_{measure}_scorer()"
        for measure in ("exact_match", "includes", "levenshtein", "json_match")
    },
    "agentevals.utils": "agentevals.scorers.utils",
    "agentevals.scorers.regex": "agentevals.scorers.create_regex_scorer",
    "agentevals.scorers.factuality": "agentevals.scorers.create_factuality_scorer",
    "agentevals.scorers.create_trajectory_scorer_code": "agentevals.scorers.create_trajectory_scorer",
    **{
        f"{module}.create_{measure}_scorer_llm": f"{module}.create_{measure}_scorer"
        for measure in ("context_relevance", "noise_sensitivity", "prompt_alignment")
        for module in ("agentevals.scorers", "agentevals.scorers.llm")
    },
}
"""Every renamed public name, qualified, and what to write instead."""


class RenamedError(ImportError):
    """A name that was renamed: the message names its replacement."""


def module_getattr(module: str) -> Callable[[str], NoReturn]:
    """A PEP 562 ``__getattr__`` for ``module``: a renamed name raises :class:`RenamedError`."""

    def __getattr__(name: str) -> NoReturn:
        new = RENAMED.get(f"{module}.{name}")
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise RenamedError(f"{module}.{name} was renamed {new}", name=module)

    return __getattr__
