"""Comparing tool-call arguments (and other JSON-like step data) for the tool and trajectory scorers."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

ArgsComparator: TypeAlias = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]
"""``(expected_args, actual_args) -> bool``: a custom rule for whether a call's arguments match."""

ArgsMatch: TypeAlias = Literal["exact", "subset", "ignore"] | ArgsComparator
"""How to compare arguments: ``"exact"`` (same keys and values), ``"subset"`` (every expected
key present with an equal value, extra actual keys allowed; applied recursively to nested
objects), ``"ignore"``, or a comparator."""


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON-like values: ``1 == 1.0``, but ``True != 1``; mappings ignore key order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if _is_list(a) and _is_list(b):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)


def json_subset(expected: Any, actual: Any) -> bool:
    """``expected`` is contained in ``actual``: mappings by key (recursively), anything else equal."""
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        return all(k in actual and json_subset(v, actual[k]) for k, v in expected.items())
    return json_equal(expected, actual)


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def validate_args_match(mode: Any) -> ArgsMatch:
    """Return ``mode`` if it is a valid :data:`ArgsMatch`, else raise ``ValueError``."""
    if mode in ("exact", "subset", "ignore") or callable(mode):
        return mode  # type: ignore[no-any-return]
    raise ValueError(f"args_match must be 'exact', 'subset', 'ignore' or a callable, not {mode!r}")


def match_args(expected: Mapping[str, Any], actual: Mapping[str, Any], mode: ArgsMatch) -> bool:
    """Whether ``actual`` arguments satisfy ``expected`` under ``mode``."""
    if mode == "ignore":
        return True
    if mode == "exact":
        return json_equal(expected, actual)
    if mode == "subset":
        return json_subset(expected, actual)
    return bool(mode(expected, actual))
