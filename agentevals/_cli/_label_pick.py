"""Which runs a labelling session shows first: those that teach most about the judge.

``uncertain``: the runs the scorer scored nearest its threshold; ``disagreement``: the runs the store's
scorers split on most (pass against fail, then the widest spread of scores); ``random``: a shuffle
(seeded for a repeatable order).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agentevals._model._thresholds import Threshold

Pick = Literal["uncertain", "disagreement", "random"]
PICKS: tuple[Pick, ...] = ("uncertain", "disagreement", "random")


@dataclass(frozen=True)
class OtherScore:
    """Another scorer's latest score of the run, and whether it passes that scorer's threshold."""

    scorer: str
    score: float
    passed: bool


@dataclass(frozen=True)
class Candidate:
    """A run to label: the scorer's latest ``score`` of it, how far that is from the threshold
    (``distance``), the other scorers' scores (``disagreement`` only), and how far the scorers split:
    ``split`` is the smaller share of pass or fail verdicts (0 when they agree), ``spread`` the range of
    their scores."""

    run_id: str
    score: float
    distance: float
    others: tuple[OtherScore, ...] = ()
    split: float = 0.0
    spread: float = 0.0


def candidates(
    rows: Iterable[tuple[Any, ...]],
    scorer: str,
    thresholds: Mapping[str, Threshold],
    default: Threshold,
    *,
    exclude: set[str],
) -> list[Candidate]:
    """The runs ``scorer`` scored, but not those in ``exclude``, from ``run_id, scorer_id, score,
    created_at`` rows: each scorer's latest score of a run counts."""
    latest: dict[str, dict[str, tuple[Any, float]]] = {}
    for run_id, scorer_id, score, created_at in rows:
        if run_id in exclude:
            continue
        per_run = latest.setdefault(run_id, {})
        if scorer_id not in per_run or created_at >= per_run[scorer_id][0]:
            per_run[scorer_id] = (created_at, float(score))
    found = []
    for run_id, scores in latest.items():
        if scorer not in scores:
            continue
        own = scores[scorer][1]
        others = tuple(
            OtherScore(other, score, thresholds.get(other, default).check(score))
            for other, (_, score) in sorted(scores.items())
            if other != scorer
        )
        verdicts = [thresholds.get(scorer, default).check(own), *(o.passed for o in others)]
        values = [own, *(o.score for o in others)]
        found.append(
            Candidate(
                run_id=run_id,
                score=own,
                distance=distance(own, thresholds.get(scorer, default)),
                others=others,
                split=min(sum(verdicts), len(verdicts) - sum(verdicts)) / len(verdicts),
                spread=max(values) - min(values),
            )
        )
    return found


def ordered(found: list[Candidate], pick: Pick, *, seed: int | None = None) -> list[Candidate]:
    """``found`` in the order ``pick`` shows them."""
    by_id = sorted(found, key=lambda c: c.run_id)
    if pick == "random":
        random.Random(seed).shuffle(by_id)
        return by_id
    if pick == "disagreement":
        return sorted(by_id, key=lambda c: (-c.split, -c.spread, c.distance))
    return sorted(by_id, key=lambda c: c.distance)


def distance(score: float, threshold: Threshold) -> float:
    """How far ``score`` is from the nearest bound of ``threshold``.

    >>> round(distance(0.4, Threshold(min=0.5)), 2), round(distance(0.9, Threshold(min=0.2, max=0.8)), 2)
    (0.1, 0.1)
    """
    bounds = [bound for bound in (threshold.min, threshold.max) if bound is not None]
    return min(abs(score - bound) for bound in bounds)
