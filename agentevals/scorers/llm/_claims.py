"""Shared prompts of the claim-checking scorers (faithfulness, hallucination)."""

from __future__ import annotations

from collections.abc import Sequence

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._judge._fence import fenced
from agentevals.scorers.llm._common import (
    NO_CONTEXT_HINT,
    numbered,
    response_text,
)


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
