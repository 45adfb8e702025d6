"""Old public names kept as aliases: each warns once per process with its new spelling."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

_warned: set[str] = set()


def deprecated_names(module: str, moved: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) serving ``moved``: old name -> ``"new.module:new_name"``.

    The first access of each old name emits one ``DeprecationWarning`` that names the new spelling; the
    value is the new object itself, so old and new names stay interchangeable.
    """

    def __getattr__(name: str) -> Any:
        target = moved.get(name)
        if target is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new_module, _, new_name = target.partition(":")
        key = f"{module}.{name}"
        if key not in _warned:
            _warned.add(key)
            warnings.warn(
                f"{module}.{name} is deprecated; use {new_module}.{new_name}",
                DeprecationWarning,
                stacklevel=2,
            )
        return getattr(importlib.import_module(new_module), new_name)

    return __getattr__
