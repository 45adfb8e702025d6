"""Frozen result dataclasses as plain dicts for step results (JSON-ready, no deep copies)."""

from __future__ import annotations

from dataclasses import fields
from functools import cache
from typing import Any


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def plain(value: Any) -> Any:
    """``value`` with dataclasses turned into dicts and lists rebuilt, recursively.

    Like ``dataclasses.asdict`` for our result types (whose leaves are immutable), at a fraction of
    its cost: ``asdict`` deep-copies every leaf.
    """
    cls: type = type(value)
    if hasattr(cls, "__dataclass_fields__"):
        return {name: plain(getattr(value, name)) for name in _field_names(cls)}
    if isinstance(value, list):
        # Our result lists are homogeneous: only lists of dataclasses need converting.
        if value and hasattr(type(value[0]), "__dataclass_fields__"):
            return [plain(item) for item in value]
        return list(value)
    return value


def as_dict(value: Any) -> dict[str, Any]:
    """A result dataclass as a plain dict (see :func:`plain`)."""
    result = plain(value)
    if not isinstance(result, dict):
        raise TypeError(f"expected a dataclass instance, got {type(value).__name__}")
    return result
