"""Shared prompts of the claim-checking scorers (faithfulness, hallucination)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from pydantic import BaseModel

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._item_counts import with_item_counts
from agentevals._scoring._judge._fence import fenced
from agentevals._scoring._steps import StepResults
from agentevals.scorers.llm._common import (
    NO_CONTEXT_HINT,
    Claims,
    extraction_count,
    numbered,
    response_text,
)

VerdictsT = TypeVar("VerdictsT", bound=BaseModel)


def claims_prompt(run: Run) -> str:
    return fenced(
        lambda data: (
            f"""List every claim the text makes: each factual statement, and each speculative one
("might", "probably"), as a short standalone sentence. Opinions about style are not claims. An empty
text has no claims.

Text:
{data(response_text(run) or "(empty)")}

Return {{"claims": [...]}}."""
        )
    )


def claims_schema(run: Run) -> type[Claims]:
    """At least one claim from a non-empty output."""
    return with_item_counts(Claims, claims=extraction_count(response_text(run)))


def one_verdict_per_claim(schema: type[VerdictsT]) -> Callable[[StepResults], type[VerdictsT]]:
    """The verdict schema of each call: ``schema`` with one entry in ``verdicts`` per extracted claim."""

    def counted(results: StepResults) -> type[VerdictsT]:
        return with_item_counts(schema, verdicts=len(results.preprocess_step_result.claims))

    return counted


def verdict_prompt(claims: Sequence[str], context: Sequence[str], labels: str, what: str) -> str:
    return fenced(
        lambda data: (
            f"""Check each claim against the context only.
{labels}

Context:
{data(numbered(context))}

Claims:
{data(numbered(claims))}

Return {{"verdicts": [{{"{what}", "verdict", "reason"}}, ...]}} with exactly one verdict per claim, in
order ({len(claims)} verdicts)."""
        )
    )


def need_context(name: str, context: list[str]) -> list[str]:
    if not context:
        raise SkipRun(
            f"{name} has no context to check the output against: {NO_CONTEXT_HINT}", reason="no_context"
        )
    return context
