"""Trajectory accuracy (LLM): were the agent's steps necessary, well ordered and complete."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agentevals._model._run import Run
from agentevals._scoring._item_counts import with_item_counts
from agentevals._scoring._judge._fence import Fence, fenced
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep
from agentevals.scorers.llm._common import (
    check_scale,
    expect_count,
    listed,
    make_judge,
    merge_options,
    numbered,
    query_text,
    reason_step,
    response_text,
    scaled,
)

INSTRUCTIONS = (
    "You evaluate the sequence of actions (tool calls and other steps) an agent took to complete a "
    "task: whether each step was necessary, whether it came in a sensible order, and what was missing."
)
NECESSITY_WEIGHT, ORDER_WEIGHT, COMPLETENESS_WEIGHT = 0.6, 0.3, 0.1


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _step_line(step: Mapping[str, Any]) -> str:
    kind = step.get("step_type") or "tool_call"
    details = []
    for label, keys in (
        ("args", ("args", "tool_args")),
        ("result", ("result", "tool_result")),
    ):
        value = next((step[k] for k in keys if step.get(k) is not None), None)
        if value is not None:
            details.append(f"{label}: {_dump(value)}")
    if step.get("data") is not None:
        details.append(f"data: {_dump(step['data'])}")
    if step.get("state") == "call" or step.get("status") == "unfinished":
        details.append("unfinished: never returned a result")
    return f"[{kind}] {step.get('name', '?')}" + (f" ({', '.join(details)})" if details else "")


def _as_mapping(value: Any) -> Any:
    """Pydantic models (e.g. ``Trajectory``/``TrajectoryStep``) as dicts; other values unchanged."""
    return value.model_dump(exclude_none=True) if isinstance(value, BaseModel) else value


def actual_steps(run: Run) -> list[dict[str, Any]]:
    """The run's steps: a trajectory's ``steps`` (dict or model), else the output's tool calls in order."""
    output = _as_mapping(run.output)
    if isinstance(output, Mapping) and isinstance(output.get("steps"), list):
        return [dict(s) for s in map(_as_mapping, output["steps"]) if isinstance(s, Mapping)]
    return [
        {"step_type": "tool_call", "name": inv.tool_name, "args": inv.args, "result": inv.result}
        | ({} if inv.finished else {"state": inv.state})
        for message in run.output_messages
        for inv in message.tool_invocations
        if inv.state != "partial-call" and inv.tool_name
    ]


def expected_steps(value: Any) -> list[dict[str, Any]] | None:
    """Expected steps from names, dicts with ``name``, or ``{"steps": [...]}``; ``None`` when absent."""
    value = _as_mapping(value)
    if value is None:
        return None
    if isinstance(value, Mapping):
        value = value.get("steps")
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ValueError("an expected trajectory must be a list of step names or dicts with a 'name'")
    steps = []
    for item in map(_as_mapping, value):
        if isinstance(item, str):
            steps.append({"name": item})
        elif isinstance(item, Mapping) and isinstance(item.get("name"), str):
            steps.append(dict(item))
        else:
            raise ValueError(f"an expected step needs a name, got {item!r}")
    return steps or None


@dataclass(frozen=True, kw_only=True)
class TrajectoryAccuracyLLMOptions:
    """``expected_trajectory`` (optional; else ``run.expected_trajectory``), ``scale``."""

    expected_trajectory: Any = None
    scale: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "expected_trajectory", expected_steps(self.expected_trajectory))
        check_scale("trajectory accuracy (LLM)", self.scale)


class StepEvaluation(BaseModel):
    step_name: str
    was_necessary: bool
    was_in_order: bool
    reasoning: str = ""


class TrajectoryAnalysis(BaseModel):
    step_evaluations: list[StepEvaluation]
    missing_steps: list[str] = listed()
    extra_steps: list[str]
    overall_assessment: str


def _analysis_prompt(run: Run, steps: Mapping[str, Any]) -> str:
    expected = steps["expected_trajectory"]

    def comparison(data: Fence) -> str:
        if not expected:
            return "\nNo expected trajectory is given: judge the steps against what the task requires.\n"
        return f"\nExpected trajectory (compare against it):\n{data(expected)}\n"

    return fenced(
        lambda data: (
            f"""Evaluate the agent's steps for the task, one evaluation per step in order: was it
necessary, and was it in a logical position? List steps that should have been taken but were not
(missing_steps) and unnecessary or redundant ones (extra_steps), and give a one-sentence assessment.

Task:
{data(query_text(run) or "(none)")}

Agent's final response:
{data(response_text(run) or "(none)")}

Steps taken:
{data(steps["actual_trajectory"])}
{comparison(data)}
Return {{"step_evaluations": [{{"step_name", "was_necessary", "was_in_order", "reasoning"}}],
"missing_steps": [...], "extra_steps": [...], "overall_assessment": "..."}} with exactly one evaluation
per step ({len(steps["actual_steps"])} evaluations)."""
        )
    )


def _analysis_schema(steps: int) -> type[TrajectoryAnalysis]:
    """One evaluation per step taken; no more extra steps than steps taken."""
    return with_item_counts(TrajectoryAnalysis, step_evaluations=steps, extra_steps=(0, steps))


def trajectory_accuracy_llm_score(
    steps: Sequence[object], analysis: TrajectoryAnalysis, scale: float
) -> float:
    """``0.6 × necessary share + 0.3 × in-order share + 0.1 × (1 − missing / (steps + missing))`` × ``scale``.

    No steps score ``scale`` when none is missing, else 0. Fewer evaluations than steps is a
    ``ValueError``.

    >>> evaluation = StepEvaluation(step_name="s", was_necessary=True, was_in_order=False, reasoning="")
    >>> analysis = TrajectoryAnalysis(step_evaluations=[evaluation], missing_steps=["t"], extra_steps=[],
    ...                               overall_assessment="")
    >>> trajectory_accuracy_llm_score(["s"], analysis, 1)  # 0.6 + 0 + 0.1 × 1/2
    0.65
    """
    evaluations = expect_count(analysis.step_evaluations, len(steps), what="evaluations", per="steps")
    missing = len(analysis.missing_steps)
    if not evaluations:
        return 0.0 if missing else scaled(1.0, scale)
    n = len(evaluations)
    value = (
        NECESSITY_WEIGHT * sum(e.was_necessary for e in evaluations) / n
        + ORDER_WEIGHT * sum(e.was_in_order for e in evaluations) / n
        + COMPLETENESS_WEIGHT * (1 - missing / (n + missing))
    )
    return scaled(min(max(value, 0.0), 1.0), scale)


def _reason_prompt(run: Run, analysis: TrajectoryAnalysis, score: float, scale: float) -> str:
    return fenced(
        lambda data: (
            f"""Explain in two or three sentences why the agent's trajectory scored {score} (out
of {scale}), naming unnecessary, misplaced or missing steps.

Task:
{data(query_text(run))}

Evaluation:
{data(analysis.model_dump_json())}"""
        )
    )


def create_trajectory_accuracy_scorer_llm(
    model: str | Judge,
    options: TrajectoryAccuracyLLMOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """Quality of the agent's action sequence, in [0, scale].

    ``0.6 × necessary share + 0.3 × in-order share + 0.1 × (1 − missing / (steps + missing))``, so a
    perfect trajectory scores 1.
    No steps scores 0 when steps were missing, else ``scale``. Compared with ``expected_trajectory`` or
    ``run.expected_trajectory`` when given; otherwise judged against the task.

    >>> create_trajectory_accuracy_scorer_llm("openai/gpt-4o-mini", expected_trajectory=["search"]).id
    'trajectory_accuracy_llm'
    """
    opts = merge_options(TrajectoryAccuracyLLMOptions, options, option_kwargs)
    judge = make_judge(model, INSTRUCTIONS)

    def preprocess(run: Run) -> dict[str, Any]:
        steps = actual_steps(run)
        expected = opts.expected_trajectory or expected_steps(run.expected_trajectory)
        return {
            "actual_steps": steps,
            "expected_steps": expected,
            "actual_trajectory": numbered([_step_line(s) for s in steps]),
            "expected_trajectory": numbered([_step_line(s) for s in expected]) if expected else None,
            "has_steps": bool(steps),
        }

    return (
        create_scorer(
            id="trajectory_accuracy_llm",
            name="Trajectory Accuracy (LLM)",
            description="Necessity, order and completeness of the agent's steps",
            judge=judge,
            score_range=(0, opts.scale),
            type="agent",
        )
        .preprocess(preprocess)
        .analyze(
            PromptStep(
                "Evaluate each step of the trajectory",
                lambda run, results: _analysis_prompt(run, results.preprocess_step_result),
                lambda results: _analysis_schema(len(results.preprocess_step_result["actual_steps"])),
            )
        )
        .generate_score(
            lambda results: trajectory_accuracy_llm_score(
                results.preprocess_step_result["actual_steps"], results.analyze_step_result, opts.scale
            )
        )
        .generate_reason(
            reason_step(
                judge,
                lambda run, results, score: _reason_prompt(
                    run, results.analyze_step_result, score, opts.scale
                ),
            )
        )
    )
