"""Trajectory code scorers: accuracy against expected steps, efficiency, blacklist, tool failures.

All are ``type="trajectory"`` scorers: they read the run's trajectory with
:func:`~agentevals.scorers.trajectory_from_run` (a ``Trajectory`` in ``run.output``, or the tool
invocations of the output messages) and an optional per-item expectation from
``run.expected_trajectory``, whose fields override the scorer's own configuration.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import StepResults
from agentevals.scorers._args_match import ToolArgsMatch, resolve_tool_args_match
from agentevals.scorers._plain import as_dict
from agentevals.scorers.trajectory._compare import compare_trajectories
from agentevals.scorers.trajectory._limits import (
    analyze_tool_failures,
    check_trajectory_blacklist,
    check_trajectory_efficiency,
    validate_budget,
    validate_retries,
)
from agentevals.scorers.trajectory._model import (
    DATA_FIELDS,
    ExpectedStep,
    Ordering,
    TrajectoryExpectation,
    TrajectoryStep,
    expectation_from,
    trajectory_from_run,
)

_ORDERINGS = ("strict", "relaxed", "unordered", "subset", "superset")


def _score_of(results: StepResults) -> float:
    value: float = results.preprocess_step_result["score"]
    return value


def step_report(step: TrajectoryStep | ExpectedStep) -> dict[str, Any]:
    """A step as the accuracy result lists it, actual and expected alike: ``name``, ``step_type``
    (``None`` on an expected step that accepts any type), ``args`` (the tool arguments, ``None`` when
    there are none or, on an expected step, when they are not checked) and ``data`` (the other step data
    set on it, e.g. ``tool_result`` and ``success``)."""
    data = {f: v for f in DATA_FIELDS if f != "tool_args" and (v := getattr(step, f)) is not None}
    return {"name": step.name, "step_type": step.step_type, "args": step.tool_args, "data": data}


def _efficiency_reason(results: StepResults) -> str | None:
    """What cost an efficiency score its points (``None`` for a full score)."""
    found = results.preprocess_step_result
    problems = [
        text
        for over, text in (
            (found["over_step_budget"], f"over the step budget ({found['total_steps']} steps)"),
            (found["over_token_budget"], f"over the token budget ({found['total_tokens']} tokens)"),
            (found["over_duration_budget"], f"over the duration budget ({found['total_duration_ms']:g} ms)"),
        )
        if over
    ]
    if redundant := found["redundant_calls"]:
        names = ", ".join(f"{c['name']} (step {c['index'] + 1})" for c in redundant)
        problems.append(f"{len(redundant)} redundant call(s) repeating the previous step: {names}")
    return _sentence(problems)


def _blacklist_reason(results: StepResults) -> str | None:
    found = results.preprocess_step_result
    violations = [*found["violated_tools"], *(" → ".join(s) for s in found["violated_sequences"])]
    return f"Blacklisted tools or sequences occur: {', '.join(violations)}." if violations else None


def _tool_failures_reason(results: StepResults) -> str | None:
    found = results.preprocess_step_result
    limit = found["max_retries_per_tool"]
    problems = [
        f"tool {p['tool_name']!r} retried {p['retry_count']} time(s) after failing, more than the {limit} "
        "allowed"
        for p in found["patterns"]
        if p["retry_count"] > limit
    ]
    if unrecovered := found["unrecovered_tools"]:
        problems.append(f"tool calls failed with no successful retry or fallback: {', '.join(unrecovered)}")
    return _sentence(problems)


def _sentence(problems: list[str]) -> str | None:
    """``problems`` as one sentence (``None`` when there are none)."""
    if not problems:
        return None
    text = "; ".join(problems)
    return text[0].upper() + text[1:] + "."


def _item(run: Run) -> TrajectoryExpectation:
    return expectation_from(run.expected_trajectory) or TrajectoryExpectation()


def _accuracy(
    run: Run,
    static: TrajectoryExpectation | None,
    ordering: Ordering,
    allow_repeated_steps: bool,
    matching: ToolArgsMatch,
    unordered_parallel_calls: bool,
) -> dict[str, Any]:
    """Compare the run's trajectory with the expected steps, the run's expectation overriding the
    scorer's (``static``), which overrides ``ordering`` and ``allow_repeated_steps``."""
    trajectory = trajectory_from_run(run)
    item = _item(run)
    steps = static.steps if static is not None and static.steps is not None else item.steps
    if steps is None:
        raise SkipRun(
            "No expected trajectory: pass expected_trajectory= to the scorer or set "
            "run.expected_trajectory for this item",
            reason="no_expected_trajectory",
        )
    order = item.ordering or (static.ordering if static else None) or ordering
    repeats = allow_repeated_steps
    for override in (static.allow_repeated_steps if static else None, item.allow_repeated_steps):
        repeats = repeats if override is None else override
    comparison = compare_trajectories(
        trajectory,
        steps,
        ordering=order,
        allow_repeated_steps=repeats,
        tool_args_match=matching,
        unordered_parallel_calls=unordered_parallel_calls,
    )
    return {
        "score": comparison.score,
        "ordering": order,
        "allow_repeated_steps": repeats,
        "actual_trajectory": [step_report(s) for s in trajectory.steps],
        "expected_trajectory": [step_report(s) for s in steps],
        "comparison": as_dict(comparison),
    }


def _accuracy_reason(results: StepResults) -> str:
    found = results.preprocess_step_result
    c = found["comparison"]
    parts = [f"{c['matched_steps']}/{c['total_expected_steps']} expected steps matched ({found['ordering']})"]
    for key, label in (
        ("missing_steps", "missing"),
        ("extra_steps", "extra"),
        ("out_of_order_steps", "out of order"),
    ):
        if c[key]:
            parts.append(f"{label}: {', '.join(c[key])}")
    if c["repeated_steps"] and not found["allow_repeated_steps"]:
        parts.append(f"repeated: {', '.join(c['repeated_steps'])}")
    return "; ".join(parts) + "."


def create_trajectory_accuracy_scorer_code(
    expected_trajectory: Any = None,
    *,
    ordering: Ordering = "relaxed",
    allow_repeated_steps: bool = True,
    tool_args_match: ToolArgsMatch | None = None,
    unordered_parallel_calls: bool = True,
) -> Scorer:
    """Score how well the agent's steps match the expected steps (see ``compare_trajectories``).

    ``expected_trajectory`` (a ``TrajectoryExpectation``, ``Trajectory``, list of steps or step
    names) is used for every run; without it each run's ``expected_trajectory`` is used, and a
    run with neither fails with a clear error (not a silent 0). ``ordering``:
    ``"strict"``, ``"relaxed"`` (default), ``"unordered"``, ``"superset"`` (= unordered) or
    ``"subset"`` (no steps outside the expectation); the run's expectation may override
    ``ordering`` and ``allow_repeated_steps``. ``tool_args_match`` compares ``tool_args`` set on
    expected steps, with the names of LangChain's trajectory evaluators: ``"exact"`` (default),
    ``"ignore"``, ``"subset"`` (the call's arguments are a subset of the expected ones),
    ``"superset"`` (the call has every expected argument, extras allowed) or
    ``(expected, actual) -> bool``.
    With ``strict`` ordering, tool calls made in one assistant message (parallel calls) may match
    in any order; ``unordered_parallel_calls=False`` makes their order count too.

    The preprocess result holds ``score``, ``ordering``, ``allow_repeated_steps``, ``comparison`` (see
    ``compare_trajectories``) and both trajectories in one shape, ``actual_trajectory`` and
    ``expected_trajectory``: lists of ``{"name", "step_type", "args", "data"}`` (see ``step_report``).

    >>> scorer = create_trajectory_accuracy_scorer_code(["search", "summarize"])
    >>> scorer.run_sync(input="q", output={"steps": [{"name": "search"}, {"name": "log"},
    ...     {"name": "summarize"}]}).score
    1.0
    """
    static = expectation_from(expected_trajectory)
    if ordering not in _ORDERINGS:
        raise ValueError(f"ordering must be one of {_ORDERINGS}, not {ordering!r}")
    mode = resolve_tool_args_match(tool_args_match)
    if not isinstance(unordered_parallel_calls, bool):
        raise ValueError(f"unordered_parallel_calls must be True or False, got {unordered_parallel_calls!r}")

    names = [s.name for s in static.steps] if static is not None and static.steps else None
    description = (
        f"Whether the trajectory follows [{' → '.join(names)}] ({ordering} ordering)"
        if names
        else f"Trajectory accuracy against each item's expected trajectory ({ordering} ordering)"
    )
    return (
        create_scorer(
            id="trajectory_accuracy_code",
            name="Trajectory Accuracy Scorer",
            description=description,
            type="trajectory",
        )
        .preprocess(
            lambda run: _accuracy(run, static, ordering, allow_repeated_steps, mode, unordered_parallel_calls)
        )
        .generate_score(_score_of)
        .generate_reason(_accuracy_reason)
    )


def create_trajectory_efficiency_scorer(
    *,
    max_steps: int | None = None,
    max_total_tokens: int | None = None,
    max_total_duration_ms: float | None = None,
    no_redundant_calls: bool = True,
) -> Scorer:
    """Score step, token and time budgets and redundant repeated tool calls (mean of the active ones).

    A run's ``expected_trajectory`` may override any budget. See ``check_trajectory_efficiency``.

    >>> scorer = create_trajectory_efficiency_scorer(max_steps=2)
    >>> scorer.run_sync(input="q", output=[{"name": "a"}, {"name": "b"}, {"name": "c"}]).score
    0.75
    """
    for name, value in (("max_steps", max_steps), ("max_total_tokens", max_total_tokens)):
        validate_budget(name, value)
    validate_budget("max_total_duration_ms", max_total_duration_ms)

    def preprocess(run: Run) -> dict[str, Any]:
        item = _item(run)
        result = check_trajectory_efficiency(
            trajectory_from_run(run),
            max_steps=item.max_steps if item.max_steps is not None else max_steps,
            max_total_tokens=item.max_total_tokens if item.max_total_tokens is not None else max_total_tokens,
            max_total_duration_ms=(
                item.max_total_duration_ms
                if item.max_total_duration_ms is not None
                else max_total_duration_ms
            ),
            no_redundant_calls=item.no_redundant_calls
            if item.no_redundant_calls is not None
            else no_redundant_calls,
        )
        return as_dict(result)

    return (
        create_scorer(
            id="trajectory_efficiency",
            name="Trajectory Efficiency Scorer",
            description="Step, token and duration budgets, and no redundant tool calls",
            type="trajectory",
        )
        .preprocess(preprocess)
        .generate_score(_score_of)
        .generate_reason(_efficiency_reason)
    )


def create_trajectory_blacklist_scorer(
    *, blacklisted_tools: Sequence[str] = (), blacklisted_sequences: Sequence[Sequence[str]] = ()
) -> Scorer:
    """1, or 0 if a forbidden tool or a forbidden sequence of consecutive steps occurs.

    A run's ``expected_trajectory`` may replace either list.

    >>> scorer = create_trajectory_blacklist_scorer(blacklisted_tools=["delete_all"])
    >>> scorer.run_sync(input="q", output=[{"name": "search"}, {"name": "delete_all"}]).score
    0.0
    """
    if isinstance(blacklisted_tools, str) or any(isinstance(s, str) for s in blacklisted_sequences):
        raise ValueError(
            "blacklisted_tools is a list of names and blacklisted_sequences a list of lists of names, "
            "e.g. blacklisted_sequences=[['delete', 'commit']]"
        )
    tools, sequences = list(blacklisted_tools), [list(s) for s in blacklisted_sequences]

    def preprocess(run: Run) -> dict[str, Any]:
        item = _item(run)
        result = check_trajectory_blacklist(
            trajectory_from_run(run),
            blacklisted_tools=item.blacklisted_tools if item.blacklisted_tools is not None else tools,
            blacklisted_sequences=(
                item.blacklisted_sequences if item.blacklisted_sequences is not None else sequences
            ),
        )
        return as_dict(result)

    return (
        create_scorer(
            id="trajectory_blacklist",
            name="Trajectory Blacklist Scorer",
            description="0 when a forbidden tool or step sequence occurs",
            type="trajectory",
        )
        .preprocess(preprocess)
        .generate_score(_score_of)
        .generate_reason(_blacklist_reason)
    )


def create_tool_failures_scorer(*, max_retries_per_tool: int = 2) -> Scorer:
    """Score tool failures: each retry of a failed tool beyond ``max_retries_per_tool`` costs 0.2,
    and the score is multiplied by the share of runs of calls not left failed (see
    ``analyze_tool_failures``), so a run whose only tool call raised scores 0.

    >>> scorer = create_tool_failures_scorer(max_retries_per_tool=0)
    >>> scorer.run_sync(input="q", output=[{"name": "api", "success": False}, {"name": "api"}]).score
    0.8
    """
    validate_retries(max_retries_per_tool)

    def preprocess(run: Run) -> dict[str, Any]:
        item = _item(run)
        limit = item.max_retries_per_tool if item.max_retries_per_tool is not None else max_retries_per_tool
        found = analyze_tool_failures(trajectory_from_run(run), max_retries_per_tool=limit)
        return as_dict(found) | {"max_retries_per_tool": limit}

    return (
        create_scorer(
            id="tool_failures",
            name="Tool Failures Scorer",
            description=f"Penalizes more than {max_retries_per_tool} retries of a failing tool",
            type="trajectory",
        )
        .preprocess(preprocess)
        .generate_score(_score_of)
        .generate_reason(_tool_failures_reason)
    )
