"""The prebuilt scorers by id: one table, derived from the factories' names.

``create_<measure>_scorer`` (optionally ``_code`` / ``_llm``) makes scorers with the id
``<measure>`` (plus the suffix); the quick check ``checks.<name>`` has the id ``check_<name>``.
The ``agentevals eval --scorer NAME`` option resolves ``NAME`` here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from types import MappingProxyType, ModuleType
from typing import Any

from agentevals.scorers import code, llm, trajectory
from agentevals.scorers.code import checks

_FACTORY = re.compile(r"create_(?P<measure>\w+?)_scorer(?P<kind>_code|_llm)?")


def scorer_id(factory_name: str) -> str | None:
    """The id of the scorers a factory makes, from its name (``None`` if it is not a factory name).

    >>> scorer_id("create_tool_call_accuracy_scorer_llm")
    'tool_call_accuracy_llm'
    """
    found = _FACTORY.fullmatch(factory_name)
    return None if found is None else found["measure"] + (found["kind"] or "")


def _table(*modules: ModuleType) -> dict[str, Callable[..., Any]]:
    table: dict[str, Callable[..., Any]] = {}
    for module in modules:
        for name in module.__all__:
            if (id := scorer_id(name)) is not None:
                table[id] = getattr(module, name)
    for name in checks.__all__:
        table[f"check_{name}"] = getattr(checks, name)
    return dict(sorted(table.items()))


SCORERS: Mapping[str, Callable[..., Any]] = MappingProxyType(_table(code, trajectory, llm))
"""Every prebuilt scorer factory by the id of the scorers it makes."""
