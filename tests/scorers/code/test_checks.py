"""Quick checks: ids, semantics (values recorded from @mastra/evals 1.10.2 checks) and validation."""

from __future__ import annotations

import re

import pytest

from agentevals import Run, ScorerError
from agentevals.scorers import checks
from agentevals.scorers.utils import create_agent_test_run, create_test_message, create_tool_invocation

RUN = create_agent_test_run(
    input_messages=["What's the weather in Paris?"],
    output=[
        create_test_message(
            "The weather in Paris is Sunny, 72°F.",
            role="assistant",
            tool_invocations=[
                create_tool_invocation(tool_name="search", tool_call_id="1"),
                create_tool_invocation(tool_name="get_weather", tool_call_id="2", result={"error": "boom"}),
                create_tool_invocation(tool_name="search", tool_call_id="3"),
            ],
        ),
        create_test_message("Anything else?", role="assistant"),
    ],
)


@pytest.mark.parametrize(
    ("scorer_id", "check", "score"),
    [
        ("check_includes", checks.includes("paris"), 1.0),
        ("check_includes", checks.includes("paris", ignore_case=False), 0.0),
        ("check_excludes", checks.excludes("error"), 1.0),
        ("check_equals", checks.equals("The weather in Paris is Sunny, 72°F.Anything else?"), 1.0),
        ("check_matches", checks.matches(re.compile(r"\d{1,3}°[FC]")), 1.0),
        ("check_matches", checks.matches(r"\d{1,3}°[FC]", exact=True), 0.0),
        ("check_similarity", checks.similarity("Sunny, 72°F"), 0.35294117647058826),
        ("check_similarity", checks.similarity("Sunny, 72°F", threshold=0.2), 1.0),
        ("check_called_tool", checks.called_tool("search", times=2), 1.0),
        ("check_called_tool", checks.called_tool("search", times=3), 0.0),
        ("check_did_not_call", checks.did_not_call("delete"), 1.0),
        ("check_tool_order", checks.tool_order(["search", "get_weather"]), 1.0),
        ("check_tool_order", checks.tool_order(["get_weather", "get_weather"]), 0.0),
        ("check_max_tool_calls", checks.max_tool_calls(2), 0.0),
        ("check_used_no_tools", checks.used_no_tools(), 0.0),
        ("check_no_tool_errors", checks.no_tool_errors(), 0.0),
    ],
)
def test_recorded_mastra_results(scorer_id: str, check: object, score: float) -> None:
    from agentevals import Scorer

    assert isinstance(check, Scorer)
    assert check.id == scorer_id and check.type == "agent"
    assert check.run_sync(RUN).score == score


def test_text_checks_on_plain_output() -> None:
    assert checks.includes("Paris").run_sync(input="Capital of France?", output="It is Paris.").score == 1.0
    assert checks.equals("4").run_sync(input="2+2?", output="4").score == 1.0
    assert checks.equals("4").run_sync(input="2+2?", output="4.").score == 0.0
    assert checks.matches(r"^\d+$", exact=False).run_sync(input="", output="42").score == 1.0
    assert checks.similarity("hello world").run_sync(input="", output="hello world").score == 1.0
    assert checks.similarity("").run_sync(input="", output="").score == 1.0


def test_text_checks_read_only_assistant_messages() -> None:
    run = Run(
        input="hi",
        output=[{"role": "tool", "content": "secret error"}, {"role": "assistant", "content": "All good"}],
    )
    assert checks.excludes("error").run_sync(run).score == 1.0
    assert checks.includes("secret").run_sync(run).score == 0.0


def test_tool_checks_on_no_tools() -> None:
    run = Run(input="hi", output="hello")
    assert checks.used_no_tools().run_sync(run).score == 1.0
    assert checks.no_tool_errors().run_sync(run).score == 1.0
    assert checks.max_tool_calls(0).run_sync(run).score == 1.0
    assert checks.called_tool("x").run_sync(run).score == 0.0


def test_no_tool_errors_states() -> None:
    def run_with(**fields: object) -> Run:
        invocation = {"tool_name": "t", **fields}
        return Run(input="q", output=[{"role": "assistant", "content": "", "tool_invocations": [invocation]}])

    assert checks.no_tool_errors().run_sync(run_with(state="result", result={"ok": 1})).score == 1.0
    assert checks.no_tool_errors().run_sync(run_with(state="call")).score == 0.0  # never answered
    assert checks.no_tool_errors().run_sync(run_with(state="error")).score == 0.0
    assert checks.no_tool_errors().run_sync(run_with(error="timeout")).score == 0.0
    failed = checks.no_tool_errors().run_sync(run_with(result={"error": "x"}))
    assert failed.preprocess_step_result == {
        "error_count": 1,
        "failed_tools": ["t"],
        "total_calls": 1,
        "passed": False,
    }


def test_tool_order_is_a_subsequence() -> None:
    run = Run(
        input="q",
        output=[
            {
                "role": "assistant",
                "content": "",
                "tool_invocations": [{"tool_name": n} for n in ("b", "a", "x", "b")],
            }
        ],
    )
    assert checks.tool_order(["a", "b"]).run_sync(run).score == 1.0
    assert checks.tool_order(["b", "b"]).run_sync(run).score == 1.0
    assert checks.tool_order(["a", "a"]).run_sync(run).score == 0.0


def test_id_and_name_overrides() -> None:
    check = checks.includes("x", id="mentions-x", name="Mentions X")
    assert (check.id, check.name) == ("mentions-x", "Mentions X")


def test_validation() -> None:
    with pytest.raises(ValueError, match="positive integer"):
        checks.called_tool("x", times=0)
    with pytest.raises(ValueError, match="non-negative integer"):
        checks.max_tool_calls(-1)
    with pytest.raises(ValueError, match="non-empty list"):
        checks.tool_order([])
    with pytest.raises(ValueError, match="between 0 and 1"):
        checks.similarity("x", threshold=1.5)
    with pytest.raises(TypeError, match="must be a string"):
        checks.includes(None)
    with pytest.raises(ScorerError, match=r"run\.output is None"):
        checks.includes("x").run_sync(input="q", output=None)
    with pytest.raises(ScorerError, match=r"run\.output is None"):
        checks.used_no_tools().run_sync(input="q", output=None)


def test_unicode_and_100_kb_output() -> None:
    text = "Ünïcödé straße " * 7_000
    assert checks.includes("STRASSE").run_sync(input="", output=text).score == 0.0
    assert checks.includes("STRASSE".lower().replace("ss", "ß")).run_sync(input="", output=text).score == 1.0
    assert checks.excludes("zebra").run_sync(input="", output=text).score == 1.0
