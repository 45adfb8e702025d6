"""Trajectory budgets and hygiene: efficiency, blacklisted tools or sequences, tool failures/retries."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from agentevals._model._errors import SkipRun
from agentevals.scorers._args_match import json_equal
from agentevals.scorers.trajectory._model import Trajectory, TrajectoryStep
from agentevals.scorers.utils import round_to_two_decimals

_TOOL_STEPS = ("tool_call", "mcp_tool_call")


def _clamp(score: float) -> float:
    return round_to_two_decimals(max(0.0, min(1.0, score)))


def _measurement(value: object) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    )


def validate_budget(name: str, value: object) -> None:
    """Raise ``ValueError`` unless ``value`` is ``None`` or a finite non-negative number."""
    if value is not None and not _measurement(value):
        raise ValueError(f"Invalid {name} budget: expected a finite nonnegative number, got {value!r}")


def validate_retries(value: object) -> None:
    """Raise ``ValueError`` unless ``value`` is a non-negative integer."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"max_retries_per_tool must be a non-negative integer, got {value!r}")


@dataclass(frozen=True, slots=True)
class RedundantCall:
    name: str
    index: int


@dataclass(frozen=True, slots=True)
class EfficiencyResult:
    score: float
    total_steps: int
    over_step_budget: bool
    total_tokens: int
    over_token_budget: bool
    total_duration_ms: float
    over_duration_budget: bool
    redundant_calls: list[RedundantCall] = field(default_factory=list)


def _all_steps(steps: Sequence[TrajectoryStep]) -> list[TrajectoryStep]:
    found: list[TrajectoryStep] = []
    pending = list(steps)
    while pending:
        step = pending.pop()
        found.append(step)
        pending.extend(step.children or ())
    return found


def _over(value: float, limit: float) -> float:
    # A zero budget is exceeded entirely by any use.
    return 1.0 if value <= limit else (max(0.0, 1 - (value - limit) / limit) if limit else 0.0)


def check_trajectory_efficiency(
    trajectory: Trajectory,
    *,
    max_steps: int | None = None,
    max_total_tokens: int | None = None,
    max_total_duration_ms: float | None = None,
    no_redundant_calls: bool = True,
) -> EfficiencyResult:
    """Mean of the active dimensions, each 1 within budget and ``1 - overshoot/budget`` beyond.

    Steps are the top-level steps; tokens are prompt + completion tokens of every
    ``model_generation`` step, nested ones included; duration is ``total_duration_ms`` or the sum of
    the top-level durations. A redundant call is a tool call repeating the previous step's name and
    arguments; each costs 0.2. A budget that cannot be evaluated (no token counts, missing durations)
    raises :class:`~agentevals.steps.SkipRun` (the run is skipped) rather than passing silently.
    """
    for name, limit in (("max_steps", max_steps), ("max_total_tokens", max_total_tokens)):
        validate_budget(name, limit)
    validate_budget("max_total_duration_ms", max_total_duration_ms)
    steps = trajectory.steps
    generations = [s for s in _all_steps(steps) if s.step_type == "model_generation"]
    counted = bool(generations) and all(
        _measurement(s.prompt_tokens) and _measurement(s.completion_tokens) for s in generations
    )
    if max_total_tokens is not None and not counted:
        raise SkipRun(
            "Cannot evaluate token budget: every model_generation step needs prompt_tokens and "
            "completion_tokens",
            reason="no_token_counts",
        )
    tokens = sum((s.prompt_tokens or 0) + (s.completion_tokens or 0) for s in generations)
    if trajectory.total_duration_ms is not None:
        duration = trajectory.total_duration_ms
        measured = _measurement(duration)
    else:
        duration = sum(s.duration_ms or 0.0 for s in steps)
        measured = bool(steps) and all(_measurement(s.duration_ms) for s in steps)
    if max_total_duration_ms is not None and not measured:
        raise SkipRun(
            "Cannot evaluate duration budget: missing or invalid duration measurements", reason="no_durations"
        )
    redundant = [
        RedundantCall(cur.name, i)
        for i, (prev, cur) in enumerate(pairwise(steps), start=1)
        if no_redundant_calls
        and cur.step_type in _TOOL_STEPS
        and (prev.name, prev.step_type) == (cur.name, cur.step_type)
        and json_equal(prev.tool_args, cur.tool_args)
    ]
    dimensions: list[float] = []
    if max_steps is not None:
        dimensions.append(_over(len(steps), max_steps))
    if max_total_tokens is not None:
        dimensions.append(_over(tokens, max_total_tokens))
    if max_total_duration_ms is not None:
        dimensions.append(_over(duration, max_total_duration_ms))
    if no_redundant_calls:
        dimensions.append(max(0.0, 1 - 0.2 * len(redundant)))
    score = sum(dimensions) / len(dimensions) if dimensions else 1.0
    return EfficiencyResult(
        score=_clamp(score),
        total_steps=len(steps),
        over_step_budget=max_steps is not None and len(steps) > max_steps,
        total_tokens=tokens,
        over_token_budget=max_total_tokens is not None and tokens > max_total_tokens,
        total_duration_ms=duration,
        over_duration_budget=max_total_duration_ms is not None and duration > max_total_duration_ms,
        redundant_calls=redundant,
    )


@dataclass(frozen=True, slots=True)
class BlacklistResult:
    score: float
    violated_tools: list[str]
    violated_sequences: list[list[str]]


def check_trajectory_blacklist(
    trajectory: Trajectory,
    *,
    blacklisted_tools: Sequence[str] = (),
    blacklisted_sequences: Sequence[Sequence[str]] = (),
) -> BlacklistResult:
    """0 if a forbidden step name, or a forbidden run of consecutive step names, occurs; else 1."""
    names = [s.name for s in trajectory.steps]
    present = set(names)
    tools = [t for t in blacklisted_tools if t in present]
    sequences = [
        list(seq)
        for seq in blacklisted_sequences
        if seq and any(names[i : i + len(seq)] == list(seq) for i in range(len(names) - len(seq) + 1))
    ]
    return BlacklistResult(0.0 if tools or sequences else 1.0, tools, sequences)


@dataclass(frozen=True, slots=True)
class RetryPattern:
    tool_name: str
    retry_count: int
    fell_back_to_alternative: bool
    alternative_tool: str | None
    eventually_succeeded: bool


@dataclass(frozen=True, slots=True)
class ToolFailureResult:
    score: float
    patterns: list[RetryPattern]
    total_retries: int
    excessive_retry_tools: list[str]
    unrecovered_tools: list[str] = field(default_factory=list)
    """Tools whose last call in a run of calls failed, with no successful fallback after it."""


def analyze_tool_failures(trajectory: Trajectory, *, max_retries_per_tool: int = 2) -> ToolFailureResult:
    """Retries of failed tool calls, and failures never recovered from.

    Each call right after a failed call of the same tool is a retry; every retry beyond
    ``max_retries_per_tool`` (per run of consecutive calls of one tool) costs 0.2. A run of calls
    whose last call failed (raised, errored, or never returned) and that no succeeding call of
    another tool followed is an unrecovered failure: the score is multiplied by the share of runs
    without one, so a run whose only tool call raised scores 0.
    """
    if (
        isinstance(max_retries_per_tool, bool)
        or not isinstance(max_retries_per_tool, int)
        or max_retries_per_tool < 0
    ):
        raise ValueError(f"max_retries_per_tool must be a non-negative integer, got {max_retries_per_tool!r}")
    calls = [s for s in trajectory.steps if s.step_type in _TOOL_STEPS]
    patterns: list[RetryPattern] = []
    unrecovered: list[str] = []
    runs = 0
    start = 0
    while start < len(calls):
        runs += 1
        end = start + 1
        while end < len(calls) and calls[end].name == calls[start].name:
            end += 1
        if calls[end - 1].success is False and not (end < len(calls) and calls[end].success is not False):
            unrecovered.append(calls[start].name)
        retries = sum(1 for k in range(start + 1, end) if calls[k - 1].success is False)
        if retries:
            succeeded = calls[end - 1].success is not False
            fallback = calls[end].name if end < len(calls) and not succeeded else None
            patterns.append(
                RetryPattern(calls[start].name, retries, fallback is not None, fallback, succeeded)
            )
        start = end
    excess = sum(max(0, p.retry_count - max_retries_per_tool) for p in patterns)
    excessive = [p.tool_name for p in patterns if p.retry_count > max_retries_per_tool]
    recovered_share = 1 - len(unrecovered) / runs if runs else 1.0
    return ToolFailureResult(
        _clamp((1 - 0.2 * excess) * recovered_share),
        patterns,
        sum(p.retry_count for p in patterns),
        excessive,
        unrecovered,
    )
