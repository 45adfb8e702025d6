"""Multi-turn judge: does a whole conversation satisfy a criterion."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._judge._fence import fenced
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep, StepResults
from agentevals.scorers.llm._common import check_scale, make_judge, merge_options, scaled

INSTRUCTIONS = (
    "You judge whole conversations between a user and an assistant against one criterion, taking every "
    "turn into account. You are strict: the criterion must hold across the conversation."
)


@dataclass(frozen=True, kw_only=True)
class MultiTurnJudgeOptions:
    """``criterion`` (required): what the conversation must satisfy; ``scale``."""

    criterion: str = ""
    scale: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.criterion, str) or not self.criterion.strip():
            raise ValueError(
                "the multi-turn judge needs a criterion, e.g. criterion='The assistant stays polite and "
                "resolves the issue'"
            )
        check_scale("multi-turn judge", self.scale)


class ConversationVerdict(BaseModel):
    satisfied: bool
    reasoning: str = ""


def transcript(run: Run) -> str:
    """Remembered, input and output messages as ``role: text`` lines (empty messages dropped)."""
    messages = [*run.remembered_messages, *run.input_messages, *run.output_messages]
    return "\n".join(f"{m.role}: {m.content.strip()}" for m in messages if m.content.strip())


def _verdict_prompt(run: Run, criterion: str) -> str:
    if not any(m.role == "assistant" and m.content.strip() for m in run.output_messages):
        raise SkipRun(
            "the multi-turn judge needs at least one assistant turn with text in run.output",
            reason="no_output",
        )
    conversation = transcript(run)
    return fenced(
        lambda data: (
            f"""Does the conversation below satisfy this criterion?

Criterion:
{criterion}

Conversation:
{data(conversation)}

Return {{"satisfied": true or false, "reasoning": "..."}}."""
        )
    )


def multi_turn_judge_score(verdict: ConversationVerdict, scale: float) -> float:
    """``scale`` when the conversation satisfies the criterion, else 0.

    >>> multi_turn_judge_score(ConversationVerdict(satisfied=True, reasoning=""), 3)
    3.0
    """
    return scaled(1.0, scale) if verdict.satisfied else 0.0


def _reason(results: StepResults, score: float) -> str:
    verdict: ConversationVerdict = results.analyze_step_result
    met = "satisfies" if verdict.satisfied else "does not satisfy"
    why = f": {verdict.reasoning}" if verdict.reasoning else "."
    return f"The score is {score} because the conversation {met} the criterion{why}"


def create_multi_turn_judge_scorer(
    model: str | Judge,
    options: MultiTurnJudgeOptions | Mapping[str, Any] | None = None,
    **option_kwargs: Any,
) -> Scorer:
    """``scale`` when the conversation satisfies ``criterion``, else 0.

    The judge sees every turn (remembered, input and output messages); a run without any assistant
    text is an error. The reason is the judge's own reasoning (no extra call).

    >>> create_multi_turn_judge_scorer("openai/gpt-4o-mini", criterion="Stays polite").id
    'multi_turn_judge'
    """
    opts = merge_options(MultiTurnJudgeOptions, options, option_kwargs)
    return (
        create_scorer(
            id="multi_turn_judge",
            name="Multi-turn Judge",
            description=f"Conversation satisfies: {opts.criterion}",
            judge=make_judge(model, INSTRUCTIONS),
            score_range=(0, opts.scale),
            type="agent",
        )
        .analyze(
            PromptStep(
                "Judge the conversation against the criterion",
                lambda run: _verdict_prompt(run, opts.criterion),
                ConversationVerdict,
            )
        )
        .generate_score(lambda results: multi_turn_judge_score(results.analyze_step_result, opts.scale))
        .generate_reason(_reason)
    )
