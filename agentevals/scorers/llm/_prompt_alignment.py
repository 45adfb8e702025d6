"""Prompt alignment: does the response follow the user's request and/or the system prompt."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._judge._fence import Fence, fenced
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep
from agentevals.scorers.llm._common import (
    UnitScore,
    check_scale,
    history_text,
    listed,
    make_judge,
    merge_options,
    query_text,
    reason_step,
    response_text,
    scaled,
)
from agentevals.scorers.utils import get_combined_system_prompt

INSTRUCTIONS = (
    "You assess how well a response follows the instructions it was given: the intent, each explicit "
    "requirement, completeness, and the requested format and tone. You are strict and specific."
)
Mode = Literal["user", "system", "both"]
USER_WEIGHTS = (0.4, 0.3, 0.2, 0.1)
SYSTEM_WEIGHTS = (0.35, 0.35, 0.15, 0.15)
BOTH_WEIGHTS = (0.7, 0.3)


@dataclass(frozen=True, kw_only=True)
class PromptAlignmentOptions:
    """``evaluation_mode``: ``"user"``, ``"system"`` or ``"both"`` (default); ``scale``."""

    evaluation_mode: Mode = "both"
    scale: float = 1.0

    def __post_init__(self) -> None:
        if self.evaluation_mode not in ("user", "system", "both"):
            raise ValueError(
                f"prompt alignment: evaluation_mode must be 'user', 'system' or 'both', "
                f"got {self.evaluation_mode!r}"
            )
        check_scale("prompt alignment", self.scale)


class _Scored(BaseModel):
    score: UnitScore


class IntentAlignment(_Scored):
    primary_intent: str
    is_addressed: bool
    reasoning: str


class Requirement(BaseModel):
    requirement: str
    is_fulfilled: bool
    reasoning: str = ""


class RequirementsFulfillment(BaseModel):
    requirements: list[Requirement] = listed()
    overall_score: UnitScore


class Completeness(_Scored):
    missing_elements: list[str] = listed()
    reasoning: str


class ResponseAppropriateness(_Scored):
    format_alignment: bool
    tone_alignment: bool
    reasoning: str


class Alignment(BaseModel):
    intent_alignment: IntentAlignment
    requirements_fulfillment: RequirementsFulfillment
    completeness: Completeness
    response_appropriateness: ResponseAppropriateness
    overall_assessment: str


class BothAlignment(BaseModel):
    user_alignment: Alignment
    system_alignment: Alignment


def weighted(alignment: Alignment, weights: tuple[float, float, float, float]) -> float:
    """The weighted sum of an alignment's four dimension scores."""
    parts = (
        alignment.intent_alignment.score,
        alignment.requirements_fulfillment.overall_score,
        alignment.completeness.score,
        alignment.response_appropriateness.score,
    )
    return sum(p * w for p, w in zip(parts, weights, strict=True))


_SHAPE = """an object {"intent_alignment": {"score", "primary_intent", "is_addressed", "reasoning"},
"requirements_fulfillment": {"requirements": [{"requirement", "is_fulfilled", "reasoning"}],
"overall_score"}, "completeness": {"score", "missing_elements", "reasoning"},
"response_appropriateness": {"score", "format_alignment", "tone_alignment", "reasoning"},
"overall_assessment"}; every score is between 0 and 1"""


def _prompts_of(run: Run, mode: Mode) -> tuple[str, str, str]:
    user, system, response = (
        query_text(run),
        get_combined_system_prompt(run.input).strip(),
        response_text(run),
    )
    if mode == "both" and not (user and system):
        raise SkipRun(
            "Both user and system prompts are required for combined alignment scoring; give the "
            "run system_messages, or use evaluation_mode='user'",
            reason="no_input" if not user else "no_system_prompt",
        )
    if mode == "user" and not user:
        raise SkipRun("User prompt is required for user prompt alignment scoring", reason="no_input")
    if mode == "system" and not system:
        raise SkipRun(
            "System prompt is required for system prompt alignment scoring; give the run "
            "system_messages (or tagged_system_messages)",
            reason="no_system_prompt",
        )
    if not response:
        raise SkipRun("Agent response is required for prompt alignment scoring", reason="no_output")
    return user, system, response


def _analysis_prompt(run: Run, mode: Mode) -> str:
    user, system, response = _prompts_of(run, mode)
    history = history_text(run)

    def sections(data: Fence) -> str:
        shown = [f"Earlier conversation:\n{data(history)}\n"] if history else []
        if mode != "user":
            shown.append(f"System prompt:\n{data(system)}\n")
        if mode != "system":
            shown.append(f"User prompt:\n{data(user)}\n")
        shown.append(f"Response:\n{data(response)}\n")
        return "\n".join(shown)

    if mode == "both":
        task = (
            "Assess the response twice, separately: against the user prompt (user_alignment) and "
            "against the system prompt's instructions (system_alignment). Return "
            f'{{"user_alignment": A, "system_alignment": A}} where A is {_SHAPE}.'
        )
    else:
        which = "user prompt" if mode == "user" else "system prompt's instructions"
        task = f"Assess the response against the {which}. Return {_SHAPE}."
    return fenced(
        lambda data: (
            f"""{task}
- intent: what the prompt mainly asks for, and whether the response addresses it;
- requirements: each explicit requirement (constraints, steps, format, length) and whether it is met;
- completeness: what is missing;
- appropriateness: whether format and tone fit what was asked.

{sections(data)}"""
        )
    )


def prompt_alignment_score(analysis: Alignment | BothAlignment, mode: Mode, scale: float) -> float:
    """The weighted dimension scores of the assessed prompt(s), × ``scale``.

    ``"both"`` weighs the user assessment 0.7 and the system one 0.3.

    >>> full = {"score": 1.0, "reasoning": ""}
    >>> unmet = Alignment(
    ...     intent_alignment=IntentAlignment(**full, primary_intent="", is_addressed=True),
    ...     requirements_fulfillment=RequirementsFulfillment(requirements=[], overall_score=0.0),
    ...     completeness=Completeness(**full, missing_elements=[]),
    ...     response_appropriateness=ResponseAppropriateness(
    ...         **full, format_alignment=True, tone_alignment=True),
    ...     overall_assessment="")
    >>> prompt_alignment_score(unmet, "user", 1), prompt_alignment_score(unmet, "system", 1)
    (0.7, 0.65)
    """
    if isinstance(analysis, BothAlignment):
        user = weighted(analysis.user_alignment, USER_WEIGHTS)
        system = weighted(analysis.system_alignment, SYSTEM_WEIGHTS)
        value = BOTH_WEIGHTS[0] * user + BOTH_WEIGHTS[1] * system
    else:
        value = weighted(analysis, USER_WEIGHTS if mode == "user" else SYSTEM_WEIGHTS)
    return scaled(value, scale)


def _reason_prompt(analysis: Alignment | BothAlignment, mode: Mode, score: float, scale: float) -> str:
    return fenced(
        lambda data: (
            f"""Explain in two or three sentences why the response's prompt
alignment score is {score} (out of {scale}; mode: {mode}), naming unmet requirements or missing elements.

Assessment:
{data(analysis.model_dump_json())}"""
        )
    )


def create_prompt_alignment_scorer(
    model: str | Judge,
    options: PromptAlignmentOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """How well the response follows the prompt, in [0, scale].

    Each assessed prompt gets four scores (intent, requirements, completeness, appropriateness),
    weighted 0.4/0.3/0.2/0.1 for the user prompt and 0.35/0.35/0.15/0.15 for the system prompt. Mode
    ``"both"`` assesses the two prompts separately in one judge call and scores
    ``0.7 × user + 0.3 × system``, each part from its own assessment. Earlier turns
    (``remembered_messages``) are shown to the judge, so short replies like "yes" are understood.

    >>> create_prompt_alignment_scorer("openai/gpt-4o-mini", evaluation_mode="user").name
    'Prompt Alignment (LLM)'
    """
    opts = merge_options(PromptAlignmentOptions, options, option_kwargs)
    judge = make_judge(model, INSTRUCTIONS)
    mode = opts.evaluation_mode
    schema: type[BaseModel] = BothAlignment if mode == "both" else Alignment
    return (
        create_scorer(
            id="prompt_alignment",
            name="Prompt Alignment (LLM)",
            description=f"How well the response follows the {mode} prompt(s)",
            judge=judge,
            score_range=(0, opts.scale),
            type="agent",
        )
        .analyze(
            PromptStep(
                "Assess the response against the prompt(s)", lambda run: _analysis_prompt(run, mode), schema
            )
        )
        .generate_score(lambda results: prompt_alignment_score(results.analyze_step_result, mode, opts.scale))
        .generate_reason(
            reason_step(
                judge,
                lambda run, results, score: _reason_prompt(
                    results.analyze_step_result, mode, score, opts.scale
                ),
            )
        )
    )
