"""JSON-like equality and argument matching shared by the tool and trajectory scorers."""

from __future__ import annotations

import pytest

from agentevals.scorers._args_match import (
    json_equal,
    json_subset,
    match_args,
    resolve_tool_args_match,
    validate_tool_args_match,
)


def test_json_equal() -> None:
    assert json_equal({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1.0})
    assert not json_equal({"a": 1}, {"a": True})
    assert json_equal(True, True) and not json_equal(1, True)
    assert not json_equal([1, 2], [2, 1])
    assert not json_equal({"a": 1}, {"a": 1, "b": 2})
    assert json_equal((1, 2), [1, 2])
    assert not json_equal("1", 1)
    assert json_equal(None, None) and not json_equal(None, {})


def test_json_subset() -> None:
    assert json_subset({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}, "d": 3})
    assert not json_subset({"a": {"b": 1}}, {"a": {"b": 2}})
    assert not json_subset({"a": 1}, {})
    assert json_subset({}, {"x": 1})
    assert not json_subset({"a": [1]}, {"a": [1, 2]})  # lists compare exactly


def test_match_args_modes() -> None:
    expected, actual = {"city": "Paris"}, {"city": "Paris", "units": "C"}
    assert not match_args(expected, actual, "exact")
    # LangChain's names: "superset" = the actual args include every expected one; "subset" = the reverse
    assert match_args(expected, actual, "superset")
    assert not match_args(expected, actual, "subset")
    assert match_args(actual, expected, "subset")
    assert not match_args(actual, expected, "superset")
    assert match_args({"x": 1}, {}, "ignore")
    assert match_args(expected, actual, lambda e, a: a["units"] == "C")


def test_validate_tool_args_match() -> None:
    assert validate_tool_args_match("superset") == "superset"
    with pytest.raises(ValueError, match="'exact', 'ignore', 'subset', 'superset' or a callable"):
        validate_tool_args_match("loose")


def test_not_passed_is_exact() -> None:
    assert resolve_tool_args_match(None) == "exact"
    assert resolve_tool_args_match("subset") == "subset"
