"""Quick checks: tiny binary scorers for common assertions (``from agentevals.scorers import checks``).

Each function returns a :class:`~agentevals.Scorer` (``type="agent"``) with a default id such as
``check_includes``; pass ``id=``/``name=`` to attach two variants of one check to the same agent.
Text checks read the assistant messages of the output; tool checks read its tool calls. A check that
scores 0 says why in its reason (``None`` when it passes).

>>> from agentevals.scorers import checks
>>> checks.includes("Paris").run_sync(input="Capital of France?", output="It is Paris.").score
1.0
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from agentevals._model._errors import SkipRun
from agentevals._model._messages import Message
from agentevals._model._run import Run
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import StepResults
from agentevals.scorers._canonical import comparable
from agentevals.scorers._run_text import assistant_text
from agentevals.scorers._text import dice_similarity
from agentevals.scorers.code._tool_call_accuracy import is_subsequence
from agentevals.scorers.utils import extract_tool_calls

__all__ = [
    "called_tool",
    "did_not_call",
    "equals",
    "excludes",
    "includes",
    "matches",
    "max_tool_calls",
    "no_tool_errors",
    "similarity",
    "tool_order",
    "used_no_tools",
]


_SHOWN = 200  # characters of an output quoted in a reason


def _binary(results: StepResults) -> float:
    return 1.0 if results.preprocess_step_result["passed"] else 0.0


def _check(
    default_id: str,
    default_name: str,
    description: str,
    preprocess: Any,
    explain: Callable[[dict[str, Any]], str],
    **names: str | None,
) -> Scorer:
    """A 0/1 check: ``preprocess``'s ``passed`` decides the score; ``explain`` gives the reason for a 0."""

    def reason(results: StepResults) -> str | None:
        found: dict[str, Any] = results.preprocess_step_result
        return None if found["passed"] else explain(found)

    return (
        create_scorer(
            id=names.get("id") or default_id,
            name=names.get("name") or default_name,
            description=description,
            type="agent",
        )
        .preprocess(preprocess)
        .generate_score(_binary)
        .generate_reason(reason)
    )


def _quoted(text: str) -> str:
    """``text`` as a reason quotes it: repr, cut after ``_SHOWN`` characters."""
    return repr(text) if len(text) <= _SHOWN else repr(text[:_SHOWN]) + f"... ({len(text)} characters)"


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _require_text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {type(value).__name__}")
    return value


def _require_value(value: Any, what: str) -> Any:
    if value is None:
        raise TypeError(f"{what} must be a string or a JSON value (dict, list, number), got None")
    return value


def _texts(run: Run, separator: str, target: Any) -> tuple[str, str]:
    """The output text and ``target`` in one canonical form (structured values as canonical JSON)."""
    output = run.output
    plain = output is not None and not isinstance(output, str | Message)
    if plain and isinstance(output, list) and output and all(isinstance(m, Message) for m in output):
        plain = False
    return comparable(output if plain else assistant_text(run, separator), target)


def _tools(run: Run) -> list[str]:
    if run.output is None:
        raise SkipRun(
            "this check reads the agent's tool calls, but run.output is None; pass output=",
            reason="no_output",
        )
    return extract_tool_calls(run.output).tools


def includes(
    expected: Any, *, ignore_case: bool = True, id: str | None = None, name: str | None = None
) -> Scorer:
    """1 if the assistant text (messages joined with spaces) contains ``expected``.

    A structured ``expected`` (or output) is compared as canonical JSON (sorted keys).
    """
    target = _require_value(expected, "expected")

    def preprocess(run: Run) -> dict[str, Any]:
        output, wanted = _texts(run, " ", target)
        if ignore_case:
            output, wanted = output.lower(), wanted.lower()
        return {"output": output, "target": wanted, "passed": wanted in output}

    return _check(
        "check_includes",
        "Includes Check",
        f"Output includes {target!r}",
        preprocess,
        lambda found: f"The output does not contain {_quoted(found['target'])}",
        id=id,
        name=name,
    )


def excludes(
    unwanted: Any, *, ignore_case: bool = True, id: str | None = None, name: str | None = None
) -> Scorer:
    """1 if the assistant text does not contain ``unwanted``."""
    target = _require_value(unwanted, "unwanted")

    def preprocess(run: Run) -> dict[str, Any]:
        output, wanted = _texts(run, " ", target)
        if ignore_case:
            output, wanted = output.lower(), wanted.lower()
        return {"output": output, "target": wanted, "passed": wanted not in output}

    return _check(
        "check_excludes",
        "Excludes Check",
        f"Output excludes {target!r}",
        preprocess,
        lambda found: f"The output contains {_quoted(found['target'])}",
        id=id,
        name=name,
    )


def equals(
    expected: Any, *, ignore_case: bool = True, id: str | None = None, name: str | None = None
) -> Scorer:
    """1 if the assistant text (messages joined without separator) equals ``expected``.

    A structured ``expected`` (or output) is compared as canonical JSON: key order does not matter.
    """
    target = _require_value(expected, "expected")

    def preprocess(run: Run) -> dict[str, Any]:
        output, wanted = _texts(run, "", target)
        if ignore_case:
            output, wanted = output.lower(), wanted.lower()
        return {"output": output, "target": wanted, "passed": output == wanted}

    return _check(
        "check_equals",
        "Equals Check",
        f"Output equals {target!r}",
        preprocess,
        lambda found: f"Expected {_quoted(found['target'])}, got {_quoted(found['output'])}",
        id=id,
        name=name,
    )


def matches(
    pattern: str | re.Pattern[str], *, exact: bool = False, id: str | None = None, name: str | None = None
) -> Scorer:
    """1 if ``pattern`` is found in the assistant text (``exact=True``: matches all of it)."""
    compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
    if not isinstance(compiled, re.Pattern):
        raise TypeError(f"pattern must be a string or a compiled re.Pattern, got {pattern!r}")

    def preprocess(run: Run) -> dict[str, Any]:
        output = assistant_text(run, "")
        found = compiled.fullmatch(output) if exact else compiled.search(output)
        return {"output": output, "pattern": compiled.pattern, "passed": found is not None}

    how = "match all of" if exact else "match anywhere in"
    return _check(
        "check_matches",
        "Matches Check",
        f"Output matches /{compiled.pattern}/",
        preprocess,
        lambda found: f"/{found['pattern']}/ does not {how} the output {_quoted(found['output'])}",
        id=id,
        name=name,
    )


def _similarity_score(similarity: float, threshold: float | None) -> float:
    """``similarity`` itself, or with a ``threshold`` 1 when it reaches the threshold, else 0.

    >>> _similarity_score(0.7, None), _similarity_score(0.7, 0.7), _similarity_score(0.69, 0.7)
    (0.7, 1.0, 0.0)
    """
    if threshold is None:
        return similarity
    return 1.0 if similarity >= threshold else 0.0


def similarity(
    expected: Any,
    *,
    threshold: float | None = None,
    ignore_case: bool = True,
    id: str | None = None,
    name: str | None = None,
) -> Scorer:
    """Dice similarity of the assistant text and ``expected`` (0–1); with ``threshold``, 1 if ≥ it else 0."""
    target = _require_value(expected, "expected")
    if threshold is not None and not (isinstance(threshold, int | float) and 0 <= threshold <= 1):
        raise ValueError(f"threshold must be a number between 0 and 1, got {threshold!r}")

    def preprocess(run: Run) -> dict[str, Any]:
        output, wanted = _texts(run, " ", target)
        if ignore_case:
            output, wanted = output.lower(), wanted.lower()
        return {
            "output": output,
            "target": wanted,
            "score": dice_similarity(output, wanted),
            "threshold": threshold,
        }

    def reason(results: StepResults, score: float) -> str | None:
        found = results.preprocess_step_result
        if score == 1:
            return None
        below = "" if threshold is None else f", below the threshold {threshold:g}"
        return f"Similarity {found['score']:.2f} to {_quoted(found['target'])}{below}"

    return (
        create_scorer(
            id=id or "check_similarity",
            name=name or "Similarity Check",
            description=f"String similarity to {target!r}",
            type="agent",
        )
        .preprocess(preprocess)
        .generate_score(lambda results: _similarity_score(results.preprocess_step_result["score"], threshold))
        .generate_reason(reason)
    )


def called_tool(tool_name: str, *, times: int = 1, id: str | None = None, name: str | None = None) -> Scorer:
    """1 if the agent called ``tool_name`` at least ``times`` times."""
    wanted = _require_text(tool_name, "tool_name")
    if isinstance(times, bool) or not isinstance(times, int) or times < 1:
        raise ValueError(f"times must be a positive integer, got {times!r}")

    def preprocess(run: Run) -> dict[str, Any]:
        count = _tools(run).count(wanted)
        return {"tool_name": wanted, "expected_times": times, "actual_count": count, "passed": count >= times}

    at_least = f" at least {times} times" if times > 1 else ""
    description = f"Agent called {wanted!r}{at_least}"
    return _check(
        "check_called_tool",
        "Called Tool Check",
        description,
        preprocess,
        lambda found: (
            f"{wanted!r} was called {_times(found['actual_count'])}, expected at least {_times(times)}"
        ),
        id=id,
        name=name,
    )


def did_not_call(tool_name: str, *, id: str | None = None, name: str | None = None) -> Scorer:
    """1 if the agent never called ``tool_name``."""
    wanted = _require_text(tool_name, "tool_name")

    def preprocess(run: Run) -> dict[str, Any]:
        count = _tools(run).count(wanted)
        return {"tool_name": wanted, "count": count, "passed": count == 0}

    description = f"Agent did not call {wanted!r}"
    return _check(
        "check_did_not_call",
        "Did Not Call Check",
        description,
        preprocess,
        lambda found: f"{wanted!r} was called {_times(found['count'])}",
        id=id,
        name=name,
    )


def tool_order(order: list[str], *, id: str | None = None, name: str | None = None) -> Scorer:
    """1 if the tools in ``order`` were called in that order (other calls allowed in between)."""
    if isinstance(order, str) or not order or not all(isinstance(t, str) and t for t in order):
        raise ValueError(f"order must be a non-empty list of tool names, got {order!r}")
    expected = list(order)

    def preprocess(run: Run) -> dict[str, Any]:
        tools = _tools(run)
        return {"actual_tools": tools, "expected_order": expected, "passed": is_subsequence(tools, expected)}

    description = f"Tool call order {' → '.join(expected)}"
    return _check(
        "check_tool_order",
        "Tool Order Check",
        description,
        preprocess,
        lambda found: (
            f"Tools called [{', '.join(found['actual_tools'])}] do not include "
            f"{' → '.join(expected)} in that order"
        ),
        id=id,
        name=name,
    )


def max_tool_calls(max: int, *, id: str | None = None, name: str | None = None) -> Scorer:
    """1 if the agent made at most ``max`` tool calls."""
    if isinstance(max, bool) or not isinstance(max, int) or max < 0:
        raise ValueError(f"max must be a non-negative integer, got {max!r}")
    limit = max

    def preprocess(run: Run) -> dict[str, Any]:
        count = len(_tools(run))
        return {"count": count, "max": limit, "passed": count <= limit}

    description = f"At most {limit} tool calls"
    return _check(
        "check_max_tool_calls",
        "Max Tool Calls Check",
        description,
        preprocess,
        lambda found: f"{found['count']} tool calls, more than the maximum of {limit}",
        id=id,
        name=name,
    )


def used_no_tools(*, id: str | None = None, name: str | None = None) -> Scorer:
    """1 if the agent made no tool call."""

    def preprocess(run: Run) -> dict[str, Any]:
        tools = _tools(run)
        return {"count": len(tools), "tools": tools, "passed": not tools}

    return _check(
        "check_used_no_tools",
        "Used No Tools Check",
        "No tool calls",
        preprocess,
        lambda found: f"{found['count']} tool call(s): {', '.join(found['tools'])}",
        id=id,
        name=name,
    )


def no_tool_errors(*, id: str | None = None, name: str | None = None) -> Scorer:
    """1 if no tool call failed: none raised, reported an error, or was left without a result."""

    def preprocess(run: Run) -> dict[str, Any]:
        _tools(run)  # validates the output
        invocations = [inv for m in run.output_messages for inv in m.tool_invocations]
        errors = [inv.tool_name for inv in invocations if inv.failed or inv.state == "call"]
        return {
            "error_count": len(errors),
            "failed_tools": errors,
            "total_calls": len(invocations),
            "passed": not errors,
        }

    description = "No tool call failed"
    return _check(
        "check_no_tool_errors",
        "No Tool Errors Check",
        description,
        preprocess,
        lambda found: (
            f"{found['error_count']} of {found['total_calls']} tool calls failed or never "
            f"returned: {', '.join(found['failed_tools'])}"
        ),
        id=id,
        name=name,
    )
