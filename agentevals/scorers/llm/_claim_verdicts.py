"""One builder for the scorers that judge a list item by item and score the verdicts with a formula.

Faithfulness, hallucination, context recall, answer relevancy, bias, toxicity and context precision
share one shape: extract the items to judge (claims, statements, opinions, context pieces), ask the
judge for one verdict per item, score the verdicts with a pure formula, and explain the score (with a
fixed sentence and no judge call when there was nothing to judge).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

from pydantic import BaseModel

from agentevals._model._run import Run
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep, StepResults
from agentevals.scorers.llm._common import PromptBuilder, expect_count, make_judge, reason_step, scaled

VerdictT = TypeVar("VerdictT", bound=BaseModel)

YES_COUNTS: Mapping[str, float] = MappingProxyType({"yes": 1.0})
"""Credit for a verdict list where only "yes" counts."""


def verdict_share(
    items: Sequence[object],
    labels: Sequence[str],
    credit: Mapping[str, float],
    scale: float,
    *,
    what: str = "verdicts",
    per: str = "claims",
) -> float:
    """The mean credit of the first ``len(items)`` labels, × ``scale``; 0 without items.

    Fewer labels than items is a ``ValueError`` naming ``what`` and ``per``; extra labels are ignored.

    >>> verdict_share(["a", "b", "c", "d"], ["yes", "no", "unsure", "yes"], {"yes": 1.0, "unsure": 0.5}, 10)
    6.25
    """
    counted = expect_count(labels, len(items), what=what, per=per)
    if not items:
        return 0.0
    return scaled(sum(credit.get(label, 0.0) for label in counted) / len(items), scale)


def build_claim_verdict_scorer(
    *,
    id: str,
    name: str,
    description: str,
    model: str | Judge,
    instructions: str,
    scale: float,
    extract: PromptStep | Callable[..., Any] | None,
    check: PromptStep,
    items: Callable[[Run, StepResults], Sequence[str]],
    verdicts: Callable[[StepResults], Sequence[VerdictT]],
    formula: Callable[[Sequence[str], Sequence[VerdictT], float], float],
    reason_prompt: PromptBuilder,
    nothing_to_judge: str | None = None,
) -> Scorer:
    """A scorer that runs ``extract`` (the preprocess step, if any) and ``check`` (one verdict per item),
    scores ``formula(items, verdicts, scale)`` in [0, scale] and explains it with ``reason_prompt``.

    ``items`` and ``verdicts`` read the judged items and the judge's verdicts from the step results.
    With ``nothing_to_judge`` (the end of "The score is S because ..."), a run without items gets that
    sentence as its reason instead of a judge call.
    """

    def score(run: Run, results: StepResults) -> float:
        return formula(items(run, results), verdicts(results), scale)

    def fixed(run: Run, results: StepResults, score: float) -> str | None:
        if nothing_to_judge is None or items(run, results):
            return None
        return f"The score is {score} because {nothing_to_judge}"

    judge = make_judge(model, instructions)
    scorer = create_scorer(
        id=id, name=name, description=description, judge=judge, score_range=(0, scale), type="agent"
    )
    if extract is not None:
        scorer = scorer.preprocess(extract)
    return (
        scorer.analyze(check).generate_score(score).generate_reason(reason_step(judge, reason_prompt, fixed))
    )
