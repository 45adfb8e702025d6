"""Tool call accuracy (LLM): were the tools the agent called appropriate for the request."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._item_counts import with_item_counts
from agentevals._scoring._judge._fence import fenced
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep
from agentevals.scorers.llm._common import (
    check_scale,
    expect_count,
    make_judge,
    merge_options,
    query_text,
    reason_step,
    response_text,
    scaled,
)
from agentevals.scorers.utils import extract_tool_calls

INSTRUCTIONS = (
    "You judge an agent's tool selection strictly: a tool call is appropriate only when it directly "
    "serves the user's explicit request. Asking for clarification instead of calling tools is "
    "appropriate when the request is too vague to act on."
)


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str = ""


def tool_spec(tool: Any) -> ToolSpec:
    """A name and description from a dict, a LangChain tool, or any object with ``name``/``id``."""
    if isinstance(tool, ToolSpec):
        return tool

    def get(key: str) -> Any:
        return tool.get(key) if isinstance(tool, Mapping) else getattr(tool, key, None)

    name = get("name") or get("id")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(
            f"each available tool needs a name (a dict with 'name' and 'description', a LangChain tool, or "
            f"an object with .name/.id); got {tool!r}"
        )
    description = get("description")
    return ToolSpec(name.strip(), description.strip() if isinstance(description, str) else "")


@dataclass(frozen=True, kw_only=True)
class ToolCallAccuracyLLMOptions:
    """``available_tools`` (required), ``penalize_missing_tools`` (default True), ``scale``."""

    available_tools: Sequence[Any] = ()
    penalize_missing_tools: bool = True
    scale: float = 1.0

    def __post_init__(self) -> None:
        if isinstance(self.available_tools, str | Mapping) or not self.available_tools:
            raise ValueError(
                "tool call accuracy (LLM) needs available_tools=[...]: the tools the agent could choose "
                "from, as dicts {'name', 'description'}, LangChain tools, or objects with name/description"
            )
        object.__setattr__(self, "available_tools", tuple(tool_spec(t) for t in self.available_tools))
        if not isinstance(self.penalize_missing_tools, bool):
            raise ValueError("tool call accuracy (LLM): penalize_missing_tools must be True or False")
        check_scale("tool call accuracy (LLM)", self.scale)


class ToolEvaluation(BaseModel):
    tool_called: str
    was_appropriate: bool
    reasoning: str = ""


class ToolAnalysis(BaseModel):
    evaluations: list[ToolEvaluation]
    missing_tools: list[str]


def _tool_calls(run: Run) -> dict[str, Any]:
    if not query_text(run) or run.output is None:
        raise SkipRun(
            "tool call accuracy needs the user's request (run input) and the agent's output",
            reason="no_output" if run.output is None else "no_input",
        )
    tools, infos = extract_tool_calls(run)
    return {"actual_tools": tools, "has_tool_calls": bool(tools), "tool_call_infos": infos}


def _calls_text(run: Run) -> str:
    lines = [
        f"{i}. {inv.tool_name}({json.dumps(inv.args, ensure_ascii=False, default=str)})"
        for i, inv in enumerate(
            (inv for m in run.output_messages for inv in m.tool_invocations if inv.state != "partial-call"),
            1,
        )
    ]
    return "\n".join(lines) or "None"


def _analysis_prompt(run: Run, calls: int, available_tools: str) -> str:
    return fenced(
        lambda data: (
            f"""Evaluate the tool calls the agent made for the user's request.
- For each call (in order), decide whether it was appropriate: it directly serves the explicit request.
  A tool that is merely helpful, or a general tool used where a specific one exists, is not appropriate.
- List tools from the available tools that the agent should have called but did not (missing_tools).
- If the request is too vague and the agent asked for clarification without calling tools, that is
  appropriate: return no evaluations and no missing tools.

User request:
{data(query_text(run))}

Agent response:
{data(response_text(run) or "(no text)")}

Tools called:
{data(_calls_text(run))}

Available tools:
{data(available_tools)}

Return {{"evaluations": [{{"tool_called", "was_appropriate", "reasoning"}}], "missing_tools": [...]}} with
exactly one evaluation per call ({calls} evaluations)."""
        )
    )


def tool_call_accuracy_llm_score(
    calls: Sequence[str], analysis: ToolAnalysis, penalize_missing_tools: bool, scale: float
) -> float:
    """Appropriate calls / (calls + missing tools) × ``scale``.

    Missing tools count only when no tool was called if ``penalize_missing_tools`` is false. No calls
    score ``scale`` when no tool is missing, else 0. Fewer evaluations than calls is a ``ValueError``.

    >>> ok, bad = (ToolEvaluation(tool_called="t", was_appropriate=a, reasoning="") for a in (True, False))
    >>> analysis = ToolAnalysis(evaluations=[ok, bad], missing_tools=["search"])
    >>> tool_call_accuracy_llm_score(["t", "u"], analysis, True, 1)
    0.33
    """
    evaluations = expect_count(analysis.evaluations, len(calls), what="evaluations", per="tool calls")
    missing = len(analysis.missing_tools)
    if not evaluations:
        return 0.0 if missing else scaled(1.0, scale)
    total = len(evaluations) + (missing if penalize_missing_tools else 0)
    return scaled(sum(e.was_appropriate for e in evaluations) / total, scale)


def _reason_prompt(run: Run, analysis: ToolAnalysis, score: float, scale: float) -> str:
    return fenced(
        lambda data: (
            f"""Explain in ONE sentence why the agent's tool use scored {score} (out of {scale}).

User request:
{data(query_text(run))}

Evaluations:
{data(analysis.model_dump_json())}"""
        )
    )


def create_tool_call_accuracy_scorer_llm(
    model: str | Judge,
    options: ToolCallAccuracyLLMOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """Share of appropriate tool calls, in [0, scale].

    ``appropriate / (calls + missing tools)``: a tool the agent should have called counts against it,
    also when other tools were called (``penalize_missing_tools=False`` counts missing tools only when
    no tool was called). No calls scores ``scale`` when none was needed (e.g. the agent rightly asked for
    clarification) and 0 when tools were missing.

    >>> create_tool_call_accuracy_scorer_llm("openai/gpt-4o-mini", available_tools=[
    ...     {"name": "weather-tool", "description": "Current weather"}]).name
    'Tool Call Accuracy (LLM)'
    """
    opts = merge_options(ToolCallAccuracyLLMOptions, options, option_kwargs)
    judge = make_judge(model, INSTRUCTIONS)
    reference = "\n".join(f"- {t.name}: {t.description or '(no description)'}" for t in opts.available_tools)
    return (
        create_scorer(
            id="tool_call_accuracy_llm",
            name="Tool Call Accuracy (LLM)",
            description="Whether the agent's tool calls were appropriate for the request",
            judge=judge,
            score_range=(0, opts.scale),
            type="agent",
        )
        .preprocess(_tool_calls)
        .analyze(
            PromptStep(
                "Judge each tool call's appropriateness",
                lambda run, results: _analysis_prompt(
                    run, len(results.preprocess_step_result["actual_tools"]), reference
                ),
                lambda results: with_item_counts(
                    ToolAnalysis,
                    evaluations=len(results.preprocess_step_result["actual_tools"]),
                    missing_tools=(0, len(opts.available_tools)),
                ),
            )
        )
        .generate_score(
            lambda results: tool_call_accuracy_llm_score(
                results.preprocess_step_result["actual_tools"],
                results.analyze_step_result,
                opts.penalize_missing_tools,
                opts.scale,
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
