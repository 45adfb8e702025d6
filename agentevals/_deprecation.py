"""Old public names kept as aliases: each warns once per process, naming its new spelling.

The names are served by a module ``__getattr__`` (PEP 562), so they stay out of ``__all__`` and
``dir()``; each getter imports lazily, since the packages that use this are still initialising.
"""

from __future__ import annotations

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


def moved(module: str, name: str) -> Renamed:
    """The old name now lives as ``name`` in ``module``, unchanged."""
    return Renamed(f"{module}.{name}", lambda: getattr(importlib.import_module(module), name))


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
