"""Every prebuilt code scorer behaves alike: a score of 0 comes with a reason naming what failed, and a
run without output is skipped with ``no_output``."""

from __future__ import annotations

from typing import Any

import pytest

from agentevals import Run
from agentevals.errors import ScorerSkipped
from agentevals.scorers._catalogue import SCORERS
from agentevals.scorers.utils import create_agent_test_run, create_test_message


def _agent(*calls: dict[str, Any], text: str = "Done.") -> Run:
    """A run whose assistant answered ``text`` after making ``calls`` (tool invocation fields)."""
    invocations = [{"result": "ok", **call} for call in calls]
    return create_agent_test_run(
        input_messages=["Please help"],
        output=[create_test_message(text, role="assistant", tool_invocations=invocations)],
    )


def _plain(**fields: Any) -> Run:
    return Run(**{"input": "q", **fields})


# id -> (factory options, a run it scores 0, words the reason must contain)
ZERO_CASES: dict[str, tuple[dict[str, Any], Run, tuple[str, ...]]] = {
    "check_called_tool": ({"tool_name": "search"}, _agent(), ("'search'", "0 times")),
    "check_did_not_call": ({"tool_name": "search"}, _agent({"tool_name": "search"}), ("'search'", "once")),
    "check_equals": ({"expected": "yes"}, _plain(output="no"), ("'yes'", "'no'")),
    "check_excludes": ({"unwanted": "secret"}, _plain(output="the secret is"), ("contains", "'secret'")),
    "check_includes": ({"expected": "Paris"}, _plain(output="Lyon"), ("does not contain", "'paris'")),
    "check_matches": ({"pattern": r"^\d+$"}, _plain(output="abc"), (r"/^\d+$/", "'abc'")),
    "check_max_tool_calls": ({"max": 0}, _agent({"tool_name": "search"}), ("1 tool calls", "maximum of 0")),
    "check_no_tool_errors": (
        {},
        _agent({"tool_name": "api", "state": "error", "error": "Timeout"}),
        ("1 of 1", "api"),
    ),
    "check_similarity": ({"expected": "abc"}, _plain(output="xyz"), ("Similarity 0.00", "'abc'")),
    "check_tool_order": (
        {"order": ["search", "answer"]},
        _agent({"tool_name": "answer"}, {"tool_name": "search"}),
        ("[answer, search]", "search → answer"),
    ),
    "check_used_no_tools": ({}, _agent({"tool_name": "search"}), ("1 tool call", "search")),
    "completeness": ({}, _plain(input="quick brown fox", output="zzz"), ("0 of 3", "quick")),
    "content_similarity": ({}, _plain(input="abc", output="xyz"), ("share no character pairs",)),
    "exact_match": ({}, _plain(output="a", ground_truth="b"), ("'b'", "'a'")),
    "includes": ({}, _plain(output="a", ground_truth="b"), ("'b'",)),
    "json_match": ({}, _plain(output='{"a": 1}', ground_truth={"a": 2}), ("$.a is 1, expected 2",)),
    "keyword_coverage": ({}, _plain(input="quick brown fox", output="zzz"), ("0 of", "quick")),
    "levenshtein": ({}, _plain(output="abc", ground_truth="xyz"), ("Edit distance 3",)),
    "regex": ({"pattern": r"^\d+$"}, _plain(output="abc"), (r"/^\d+$/",)),
    "textual_difference": ({}, _plain(input="abc", output="xyz"), ("Similarity ratio 0.00",)),
    "tone": ({"reference_tone": "I love it"}, _plain(input="", output="I hate it"), ("difference of 2.00",)),
    "tool_call_accuracy_code": (
        {"expected_tool": "search"},
        _agent({"tool_name": "weather"}),
        ("weather", "'search'", "no match"),
    ),
    "tool_failures": ({}, _plain(output=[{"name": "api", "success": False}]), ("api",)),
    "trajectory": (
        {"defaults": {"blacklisted_tools": ["delete"]}},
        _plain(output=[{"name": "delete"}]),
        ("Blacklist violation", "delete"),
    ),
    "trajectory_accuracy_code": (
        {"expected_trajectory": ["search"]},
        _plain(output=[{"name": "other"}]),
        ("0/1", "missing: search"),
    ),
    "trajectory_blacklist": (
        {"blacklisted_tools": ["delete"]},
        _plain(output=[{"name": "delete"}]),
        ("delete",),
    ),
    "trajectory_efficiency": (
        {"max_steps": 1, "no_redundant_calls": False},
        _plain(output=[{"name": "a"}, {"name": "b"}, {"name": "c"}]),
        ("step budget", "3 steps"),
    ),
}


def test_every_prebuilt_code_scorer_has_a_zero_case() -> None:
    code = {
        id for id, factory in SCORERS.items() if not factory.__module__.startswith("agentevals.scorers.llm")
    }
    assert code == set(ZERO_CASES)


@pytest.mark.parametrize("id", sorted(ZERO_CASES))
def test_a_zero_score_comes_with_a_reason_naming_what_failed(id: str) -> None:
    options, run, words = ZERO_CASES[id]
    result = SCORERS[id](**options).run_sync(run)
    assert result.score == 0.0
    assert result.reason, f"{id} scored 0 without a reason"
    for word in words:
        assert word in result.reason, (word, result.reason)


@pytest.mark.parametrize(
    ("id", "options", "run", "words"),
    [
        (
            "tool_failures",
            {"max_retries_per_tool": 0},
            [False, True],
            ("'api' retried 1 time(s)", "0 allowed"),
        ),
        ("trajectory_efficiency", {}, [True, True], ("1 redundant call", "api (step 2)")),
    ],
)
def test_a_partial_score_says_what_cost_it(
    id: str, options: dict[str, Any], run: list[bool], words: tuple[str, ...]
) -> None:
    steps = [{"name": "api", "success": ok, "tool_args": {"q": 1}} for ok in run]
    result = SCORERS[id](**options).run_sync(input="q", output=steps)
    assert 0 < result.score < 1 and result.reason
    for word in words:
        assert word in result.reason, (word, result.reason)


@pytest.mark.parametrize(
    "id", ["check_includes", "tool_failures", "trajectory_blacklist", "trajectory_efficiency"]
)
def test_a_full_score_has_no_complaint(id: str) -> None:
    options = ZERO_CASES[id][0]
    run = _plain(output=[{"name": "search"}]) if id != "check_includes" else _plain(output="Paris")
    result = SCORERS[id](**options).run_sync(run)
    assert result.score == 1.0 and result.reason is None


@pytest.mark.parametrize("id", sorted(ZERO_CASES))
def test_a_run_without_output_is_skipped_with_no_output(id: str) -> None:
    options = ZERO_CASES[id][0]
    with pytest.raises(ScorerSkipped) as raised:
        SCORERS[id](**options).run_sync(Run(input="quick brown fox", output=None, ground_truth="x"))
    assert raised.value.skip_reason == "no_output", raised.value.message
