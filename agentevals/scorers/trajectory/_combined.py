"""The combined trajectory scorer: accuracy, efficiency, tool failures and blacklist in one score."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentevals._model._run import Run
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import StepResults
from agentevals.scorers._args_match import ToolArgsMatch, resolve_tool_args_match
from agentevals.scorers._plain import as_dict
from agentevals.scorers.trajectory._compare import TrajectoryComparison, compare_trajectories
from agentevals.scorers.trajectory._limits import (
    BlacklistResult,
    EfficiencyResult,
    ToolFailureResult,
    analyze_tool_failures,
    check_trajectory_blacklist,
    check_trajectory_efficiency,
)
from agentevals.scorers.trajectory._model import (
    ExpectedStep,
    Trajectory,
    TrajectoryExpectation,
    TrajectoryStep,
    expectation_from,
    trajectory_from_run,
)
from agentevals.scorers.utils import round_to_two_decimals

DEFAULT_WEIGHTS: Mapping[str, float] = {
    "accuracy": 0.4,
    "efficiency": 0.3,
    "tool_failures": 0.2,
    "blacklist": 0.1,
}


@dataclass(frozen=True, slots=True)
class LevelResult:
    """The evaluation of one level of a trajectory (the run, or the children of one step)."""

    score: float
    step_name: str | None = None
    accuracy: TrajectoryComparison | None = None
    efficiency: EfficiencyResult | None = None
    blacklist: BlacklistResult | None = None
    tool_failures: ToolFailureResult | None = None
    nested: list[LevelResult] = field(default_factory=list)

    @property
    def violates_blacklist(self) -> bool:
        own = self.blacklist is not None and self.blacklist.score == 0
        return own or any(n.violates_blacklist for n in self.nested)


@dataclass(frozen=True, slots=True)
class _Matching:
    """How steps match: tool arguments, and whether parallel calls may match in any order."""

    tool_args: ToolArgsMatch
    unordered_parallel_calls: bool


def _merge(defaults: TrajectoryExpectation, item: TrajectoryExpectation) -> TrajectoryExpectation:
    fields = defaults.model_dump(exclude_none=True) | item.model_dump(exclude_none=True)
    return TrajectoryExpectation.model_validate(fields)


def _evaluate(
    trajectory: Trajectory, config: TrajectoryExpectation, weights: Mapping[str, float], args: _Matching
) -> LevelResult:
    accuracy = None
    if config.steps is not None:
        accuracy = compare_trajectories(
            trajectory,
            config.steps,
            ordering=config.ordering or "relaxed",
            allow_repeated_steps=config.allow_repeated_steps is not False,
            tool_args_match=args.tool_args,
            unordered_parallel_calls=args.unordered_parallel_calls,
        )
    budgets = (
        config.max_steps,
        config.max_total_tokens,
        config.max_total_duration_ms,
        config.no_redundant_calls,
    )
    efficiency = None
    if any(b is not None for b in budgets):
        efficiency = check_trajectory_efficiency(
            trajectory,
            max_steps=config.max_steps,
            max_total_tokens=config.max_total_tokens,
            max_total_duration_ms=config.max_total_duration_ms,
            no_redundant_calls=config.no_redundant_calls is not False,
        )
    blacklist = None
    if config.blacklisted_tools or config.blacklisted_sequences:
        blacklist = check_trajectory_blacklist(
            trajectory,
            blacklisted_tools=config.blacklisted_tools or (),
            blacklisted_sequences=config.blacklisted_sequences or (),
        )
    failures = analyze_tool_failures(
        trajectory,
        max_retries_per_tool=2 if config.max_retries_per_tool is None else config.max_retries_per_tool,
    )
    nested = _nested(config.steps or [], trajectory.steps, weights, args)
    parts = [
        (weights["accuracy"], accuracy.score if accuracy else None),
        (weights["efficiency"], efficiency.score if efficiency else None),
        (
            weights["tool_failures"],
            failures.score if failures.patterns or failures.unrecovered_tools else None,
        ),
        (weights["blacklist"], blacklist.score if blacklist else None),
    ]
    active = [(w, v) for w, v in parts if v is not None]
    total = sum(w for w, _ in active)
    score = sum(w / total * v for w, v in active) if active and total > 0 else 1.0
    if nested:
        score = 0.7 * score + 0.3 * sum(n.score for n in nested) / len(nested)
    result = LevelResult(
        round_to_two_decimals(score), None, accuracy, efficiency, blacklist, failures, nested
    )
    return dataclasses.replace(result, score=0.0) if result.violates_blacklist else result


def _nested(
    expected: Sequence[ExpectedStep],
    actual: Sequence[TrajectoryStep],
    weights: Mapping[str, float],
    args: _Matching,
) -> list[LevelResult]:
    results: list[LevelResult] = []
    used: set[int] = set()
    for want in expected:
        if want.children is None:
            continue
        index = next(
            (
                i
                for i, step in enumerate(actual)
                if i not in used
                and step.name == want.name
                and (want.step_type is None or step.step_type == want.step_type)
            ),
            None,
        )
        if index is None:
            child_steps = [s.name for s in want.children.steps or []]
            missing = TrajectoryComparison(0.0, 0, len(child_steps), 0, child_steps, [], [], [])
            results.append(LevelResult(0.0, want.name, missing if child_steps else None))
            continue
        used.add(index)
        step = actual[index]
        child = Trajectory(steps=step.children or [], total_duration_ms=step.duration_ms)
        results.append(
            dataclasses.replace(_evaluate(child, want.children, weights, args), step_name=want.name)
        )
    return results


def _validated_weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    merged = dict(DEFAULT_WEIGHTS)
    for key, value in (weights or {}).items():
        if key not in DEFAULT_WEIGHTS:
            raise ValueError(f"unknown weight {key!r}; weights are {sorted(DEFAULT_WEIGHTS)}")
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            raise ValueError(f"weight {key!r} must be a finite non-negative number, got {value!r}")
        merged[key] = float(value)
    return merged


def _reason(result: dict[str, Any], score: float) -> str:
    lines = [f"Score: {score}"]
    blacklist = result["blacklist"]
    if blacklist and blacklist["score"] == 0:
        found = blacklist["violated_tools"] + [" → ".join(s) for s in blacklist["violated_sequences"]]
        return "\n".join([*lines, f"Blacklist violation: {', '.join(found)}."])
    if score == 0 and any(_nested_violation(n) for n in result["nested"]):
        names = [n["step_name"] for n in result["nested"] if _nested_violation(n)]
        return "\n".join([*lines, f"Blacklist violation inside: {', '.join(names)}."])
    if accuracy := result["accuracy"]:
        details = [f"{accuracy['matched_steps']}/{accuracy['total_expected_steps']} expected steps matched"]
        for key, label in (
            ("missing_steps", "missing"),
            ("extra_steps", "extra"),
            ("out_of_order_steps", "out of order"),
        ):
            if accuracy[key]:
                details.append(f"{label}: {', '.join(accuracy[key])}")
        lines.append(f"Accuracy ({accuracy['score']}): {'; '.join(details)}.")
    if efficiency := result["efficiency"]:
        details = [
            text
            for flag, text in (
                (efficiency["over_step_budget"], f"over step budget ({efficiency['total_steps']} steps)"),
                (efficiency["over_token_budget"], f"over token budget ({efficiency['total_tokens']} tokens)"),
                (
                    efficiency["over_duration_budget"],
                    f"over duration budget ({efficiency['total_duration_ms']} ms)",
                ),
                (
                    bool(efficiency["redundant_calls"]),
                    f"{len(efficiency['redundant_calls'])} redundant call(s)",
                ),
            )
            if flag
        ]
        lines.append(f"Efficiency ({efficiency['score']}): {'; '.join(details) or 'within budget'}.")
    failures = result["tool_failures"]
    if failures["patterns"] or failures["unrecovered_tools"]:
        unrecovered = failures["unrecovered_tools"]
        failed = f"; failed without recovery: {', '.join(unrecovered)}" if unrecovered else ""
        lines.append(f"Tool failures ({failures['score']}): {failures['total_retries']} retries{failed}.")
    if result["nested"]:
        lines.append("Nested: " + ", ".join(f"{n['step_name']} {n['score']}" for n in result["nested"]) + ".")
    return "\n".join(lines)


def _nested_violation(nested: dict[str, Any]) -> bool:
    own = nested["blacklist"] is not None and nested["blacklist"]["score"] == 0
    return own or any(_nested_violation(n) for n in nested["nested"])


def create_trajectory_scorer(
    *,
    defaults: Any = None,
    weights: Mapping[str, float] | None = None,
    tool_args_match: ToolArgsMatch | None = None,
    unordered_parallel_calls: bool = True,
) -> Scorer:
    """One score for a trajectory from every configured dimension.

    The configuration is ``defaults`` (a ``TrajectoryExpectation`` or its dict form) overridden
    field by field by the run's ``expected_trajectory`` (its ``steps`` replace the default steps).
    Dimensions, weighted by ``weights`` (defaults ``accuracy`` 0.4, ``efficiency`` 0.3,
    ``tool_failures`` 0.2, ``blacklist`` 0.1) and renormalized over the active ones: accuracy when
    steps are expected, efficiency when a budget or ``no_redundant_calls`` is set, tool failures
    when a failed tool was retried, blacklist when one is configured. Any blacklist violation,
    at any level, scores 0. Expected steps with ``children`` are evaluated the same way against
    the children of the matching actual step and blended in as ``0.7·level + 0.3·mean(nested)``.
    Nothing configured and no retries scores 1. ``tool_args_match`` compares expected ``tool_args``
    as in :func:`create_trajectory_accuracy_scorer_code`, and
    ``unordered_parallel_calls`` lets parallel calls match in any order under ``strict`` ordering.

    >>> scorer = create_trajectory_scorer(defaults={"steps": ["search", "answer"], "max_steps": 4})
    >>> scorer.run_sync(input="q", output=[{"name": "search"}, {"name": "answer"}]).score
    1.0
    """
    base = expectation_from(defaults) or TrajectoryExpectation()
    weight_map = _validated_weights(weights)
    mode = resolve_tool_args_match(tool_args_match)
    if not isinstance(unordered_parallel_calls, bool):
        raise ValueError(f"unordered_parallel_calls must be True or False, got {unordered_parallel_calls!r}")
    matching = _Matching(mode, unordered_parallel_calls)

    base_fields = base.model_dump(exclude_none=True)

    def preprocess(run: Run) -> dict[str, Any]:
        item = expectation_from(run.expected_trajectory)
        config = base if item is None else _merge(base, item)
        fields = base_fields if item is None else config.model_dump(exclude_none=True)
        result = _evaluate(trajectory_from_run(run), config, weight_map, matching)
        return {**as_dict(result), "config": dict(fields)}

    def score(results: StepResults) -> float:
        value: float = results.preprocess_step_result["score"]
        return value

    def reason(results: StepResults, score: float) -> str:
        return _reason(results.preprocess_step_result, score)

    return (
        create_scorer(
            id="trajectory",
            name="Trajectory Scorer",
            description="Trajectory accuracy, efficiency, tool failures and blacklist in one weighted score",
            type="trajectory",
        )
        .preprocess(preprocess)
        .generate_score(score)
        .generate_reason(reason)
    )
