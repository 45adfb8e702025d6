"""Comparing tool-call arguments (and other JSON-like step data) for the tool and trajectory scorers.

``tool_args_match=`` takes the names LangChain's ``agentevals`` trajectory evaluators use for
``tool_args_match_mode``: ``"exact"``, ``"ignore"``, ``"subset"`` (the actual call's arguments are a
subset of the expected ones) and ``"superset"`` (the actual call's arguments include every expected
one).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

ArgsComparator: TypeAlias = Callable[[Mapping[str, Any], Mapping[str, Any]], bool]
"""``(expected_args, actual_args) -> bool``: a custom rule for whether a call's arguments match."""

ToolArgsMatch: TypeAlias = Literal["exact", "ignore", "subset", "superset"] | ArgsComparator
"""How to compare a call's arguments with the expected ones: ``"exact"`` (same keys and values),
``"ignore"``, ``"subset"`` (every actual argument is expected, with an equal value; expected ones may
be missing), ``"superset"`` (every expected argument is present with an equal value; extra actual
ones allowed), or a comparator. Nested objects are compared the same way, recursively."""

_MODES = ("exact", "ignore", "subset", "superset")


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


def json_subset(smaller: Any, larger: Any) -> bool:
    """``smaller`` is contained in ``larger``: mappings by key (recursively), anything else equal."""
    if isinstance(smaller, Mapping) and isinstance(larger, Mapping):
        return all(k in larger and json_subset(v, larger[k]) for k, v in smaller.items())
    return json_equal(smaller, larger)


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def validate_tool_args_match(mode: Any) -> ToolArgsMatch:
    """Return ``mode`` if it is a valid :data:`ToolArgsMatch`, else raise ``ValueError``."""
    if mode in _MODES or callable(mode):
        return mode  # type: ignore[no-any-return]
    raise ValueError(
        f"tool_args_match must be 'exact', 'ignore', 'subset', 'superset' or a callable, not {mode!r}"
    )


def resolve_tool_args_match(tool_args_match: Any) -> ToolArgsMatch:
    """The mode from ``tool_args_match=``: ``None`` (not passed) is ``"exact"``."""
    return "exact" if tool_args_match is None else validate_tool_args_match(tool_args_match)


def match_args(expected: Mapping[str, Any], actual: Mapping[str, Any], mode: ToolArgsMatch) -> bool:
    """Whether ``actual`` arguments satisfy ``expected`` under ``mode`` (see :data:`ToolArgsMatch`)."""
    if mode == "ignore":
        return True
    if mode == "exact":
        return json_equal(expected, actual)
    if mode == "superset":
        return json_subset(expected, actual)
    if mode == "subset":
        return json_subset(actual, expected)
    return bool(mode(expected, actual))
