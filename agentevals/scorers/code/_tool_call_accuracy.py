"""Tool call accuracy (code): did the agent call the expected tool, or the expected tools in order?"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import StepResults
from agentevals.scorers._args_match import ToolArgsMatch, match_args, resolve_tool_args_match
from agentevals.scorers.utils import extract_tool_calls

_ID = "tool_call_accuracy_code"


def is_subsequence(actual: Sequence[Any], expected: Sequence[Any], matches: Any = None) -> bool:
    """Whether ``expected`` occurs in ``actual`` in order, other items allowed in between.

    Greedy earliest matching is optimal for subsequences, so ``[B, A, B]`` contains ``[A, B]``.
    ``matches(actual_item, expected_item)`` defaults to equality.
    """
    position = 0
    for item in actual:
        if position == len(expected):
            break
        if (item == expected[position]) if matches is None else matches(item, expected[position]):
            position += 1
    return position == len(expected)


def _validated_tools(expected_tool: Any, expected_tool_order: Any) -> tuple[str | None, list[str] | None]:
    if expected_tool is not None and (not isinstance(expected_tool, str) or not expected_tool):
        raise ValueError(f"expected_tool must be a non-empty tool name, got {expected_tool!r}")
    order: list[str] | None = None
    if expected_tool_order is not None:
        if isinstance(expected_tool_order, str) or not isinstance(expected_tool_order, Sequence):
            raise ValueError("expected_tool_order must be a list of tool names, e.g. ['search', 'summarize']")
        if not all(isinstance(t, str) and t for t in expected_tool_order):
            raise ValueError(
                f"expected_tool_order must contain non-empty tool names, got {expected_tool_order!r}"
            )
        order = list(expected_tool_order) or None
    if expected_tool is None and order is None:
        raise ValueError("Either expected_tool or expected_tool_order must be provided")
    return expected_tool, order


def _validated_args(expected_args: Any, tools: set[str]) -> dict[str, Mapping[str, Any]] | None:
    if expected_args is None:
        return None
    if not isinstance(expected_args, Mapping) or not all(
        isinstance(v, Mapping) for v in expected_args.values()
    ):
        raise ValueError(
            "expected_args must map tool names to argument dicts, e.g. {'weather': {'city': 'Paris'}}"
        )
    unknown = sorted(set(expected_args) - tools)
    if unknown:
        raise ValueError(
            f"expected_args names tools that are not expected: {unknown}; expected tools: {sorted(tools)}"
        )
    return dict(expected_args)


Call = tuple[str, Mapping[str, Any]]
"""A tool call as ``(tool name, arguments)``."""
CallMatcher = Callable[[Call, str], bool]
"""Whether a call matches an expected tool name (and the arguments expected for it)."""


def called_expected_tool(calls: Sequence[Call], tool: str, strict_mode: bool, matches: CallMatcher) -> bool:
    """Whether a call matches ``tool`` (with ``strict_mode``: it is the only call).

    >>> same_name = lambda call, name: call[0] == name
    >>> called_expected_tool([("search", {}), ("answer", {})], "search", False, same_name)
    True
    >>> called_expected_tool([("search", {}), ("answer", {})], "search", True, same_name)
    False
    """
    hits = [c for c in calls if matches(c, tool)]
    return len(calls) == 1 and len(hits) == 1 if strict_mode else bool(hits)


def called_in_order(
    calls: Sequence[Call], order: Sequence[str], strict_mode: bool, matches: CallMatcher
) -> bool:
    """Whether the calls follow ``order``: as a subsequence, or (``strict_mode``) exactly.

    >>> same_name = lambda call, name: call[0] == name
    >>> calls = [("search", {}), ("log", {}), ("answer", {})]
    >>> called_in_order(calls, ["search", "answer"], False, same_name)
    True
    >>> called_in_order(calls, ["search", "answer"], True, same_name)
    False
    """
    if strict_mode:
        return len(calls) == len(order) and all(map(matches, calls, order))
    return is_subsequence(calls, order, matches)


def tool_call_accuracy_code_score(
    has_tool_calls: bool, correct_tool_called: bool, correct_order_called: bool | None
) -> float:
    """1 when tools were called and the order (when one is expected, else the single tool) is right.

    >>> tool_call_accuracy_code_score(True, False, True), tool_call_accuracy_code_score(True, True, None)
    (1.0, 1.0)
    >>> tool_call_accuracy_code_score(False, True, None)
    0.0
    """
    if not has_tool_calls:
        return 0.0
    if correct_order_called is not None:
        return 1.0 if correct_order_called else 0.0
    return 1.0 if correct_tool_called else 0.0


def _check_calls(
    run: Run,
    tool: str | None,
    order: list[str] | None,
    strict_mode: bool,
    expected: Mapping[str, Mapping[str, Any]] | None,
    matches: CallMatcher,
) -> dict[str, Any]:
    if not run.input_messages or run.output is None or run.output == [] or run.output == "":
        raise SkipRun(
            "Input and output messages cannot be null or empty",
            reason="no_input" if not run.input_messages else "no_output",
        )
    tools, infos = extract_tool_calls(run.output)
    messages = run.output_messages
    calls = [
        (i.tool_name, messages[i.message_index].tool_invocations[i.invocation_index].args) for i in infos
    ]
    mismatches = [
        {"tool_name": name, "tool_call_id": info.tool_call_id, "args": args}
        for (name, args), info in zip(calls, infos, strict=True)
        if expected and name in expected and not matches((name, args), name)
    ]
    return {
        "expected_tool": tool,
        "actual_tools": tools,
        "strict_mode": strict_mode,
        "expected_tool_order": order,
        "has_tool_calls": bool(tools),
        "correct_tool_called": tool is not None and called_expected_tool(calls, tool, strict_mode, matches),
        "correct_order_called": None
        if order is None
        else called_in_order(calls, order, strict_mode, matches),
        "tool_call_infos": [info._asdict() for info in infos],
        "expected_args": expected,
        "args_mismatches": mismatches,
    }


def _score(results: StepResults) -> float:
    found = results.preprocess_step_result
    return tool_call_accuracy_code_score(
        found["has_tool_calls"], found["correct_tool_called"], found["correct_order_called"]
    )


def _reason(found: Mapping[str, Any], score: float) -> str:
    order, strictness = found["expected_tool_order"], " (strict)" if found["strict_mode"] else ""
    called = ", ".join(found["actual_tools"]) or "no tools"
    target = f"the order [{', '.join(order)}]" if order is not None else f"'{found['expected_tool']}'"
    text = f"Called {called}; expected {target}{strictness}: {'match' if score == 1 else 'no match'}."
    if found["args_mismatches"]:
        wrong = ", ".join(sorted({m["tool_name"] for m in found["args_mismatches"]}))
        text += f" Arguments did not match for: {wrong}."
    return text


def create_tool_call_accuracy_scorer_code(
    *,
    expected_tool: str | None = None,
    strict_mode: bool = False,
    expected_tool_order: Sequence[str] | None = None,
    expected_args: Mapping[str, Mapping[str, Any]] | None = None,
    tool_args_match: ToolArgsMatch | None = None,
) -> Scorer:
    """Binary score (0 or 1) of whether the agent called the right tool(s).

    * Single tool (``expected_tool``): lenient mode passes if the tool was called at all; with
      ``strict_mode=True`` it must be the only call.
    * Order (``expected_tool_order``, takes precedence): with ``strict_mode=True`` the calls must
      be exactly that sequence; otherwise the expected tools must appear in that relative order,
      other calls allowed in between. This is a proper subsequence check, not a comparison of
      each tool's first occurrence: ``[B, A, B]`` passes ``[A, B]``.
    * Arguments: ``expected_args={"weather": {"city": "Paris"}}`` also requires
      a call to match those arguments, compared with ``tool_args_match`` (the names of LangChain's
      trajectory evaluators) — ``"exact"`` (default), ``"superset"`` (every expected argument
      present, extra actual ones allowed), ``"subset"`` (every actual argument expected, some
      expected ones may be missing), ``"ignore"``, or a callable ``(expected, actual) -> bool``.
      Calls of a tool with the wrong arguments do not count.

    No tool call at all scores 0. The run needs input messages and a non-empty output, else the
    step fails with "Input and output messages cannot be null or empty".

    >>> from agentevals.scorers.utils import create_agent_test_run, create_test_message
    >>> from agentevals.scorers.utils import create_tool_invocation
    >>> run = create_agent_test_run(
    ...     input_messages=["What is the weather like in New York today?"],
    ...     output=[create_test_message("Let me check.", role="assistant", tool_invocations=[
    ...         create_tool_invocation(tool_name="weather-tool", args={"location": "New York"})])])
    >>> create_tool_call_accuracy_scorer_code(expected_tool="weather-tool").run_sync(run).score
    1.0
    >>> create_tool_call_accuracy_scorer_code(
    ...     expected_tool="weather-tool", expected_args={"weather-tool": {"location": "Paris"}}
    ... ).run_sync(run).score
    0.0
    """
    tool, order = _validated_tools(expected_tool, expected_tool_order)
    if not isinstance(strict_mode, bool):
        raise ValueError(f"strict_mode must be True or False, got {strict_mode!r}")
    expected = _validated_args(expected_args, {t for t in (tool, *(order or ())) if t})
    mode = resolve_tool_args_match(tool_args_match)

    def call_matches(call: Call, name: str) -> bool:
        if call[0] != name:
            return False
        wanted = expected.get(name) if expected else None
        return wanted is None or match_args(wanted, call[1], mode)

    description = (
        f"Whether the agent called tools in the order [{', '.join(order)}]"
        if order is not None
        else f"Whether the agent selected the correct tool ({tool})"
    )
    return (
        create_scorer(id=_ID, name="Tool Call Accuracy Scorer", description=description, type="agent")
        .preprocess(lambda run: _check_calls(run, tool, order, strict_mode, expected, call_matches))
        .generate_score(_score)
        .generate_reason(lambda results, score: _reason(results.preprocess_step_result, score))
    )
