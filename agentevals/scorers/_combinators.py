"""Scorers made of scorers: weakest link, best of, weighted mean.

Sub-scorers run concurrently on the same run; their judge calls count towards the combined result.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from typing import Any

from agentevals._result import ScoreResult
from agentevals._run import Run
from agentevals._scorer import Scorer, create_scorer


def _check_scorers(scorers: tuple[Scorer, ...], what: str) -> None:
    if not scorers:
        raise ValueError(f"{what}() needs at least one scorer")
    for s in scorers:
        if not isinstance(s, Scorer):
            raise TypeError(f"{what}() takes Scorer objects, got {type(s).__name__}")


async def _run_all(scorers: list[Scorer], run: Run) -> list[dict[str, Any]]:
    """Each scorer's ``{"scorer_id", "score", "reason"}``, in the order given."""
    results: list[ScoreResult] = await asyncio.gather(*(s.run(run) for s in scorers))
    return [{"scorer_id": r.scorer_id, "score": r.score, "reason": r.reason} for r in results]


def all_of(*scorers: Scorer, id: str | None = None) -> Scorer:
    """Weakest link: the minimum score; the reasons joined with ``"; "``.

    >>> from agentevals.scorers import create_exact_match_scorer, create_includes_scorer
    >>> both = all_of(create_exact_match_scorer(), create_includes_scorer())
    >>> both.run_sync(input="2+2?", output="4", ground_truth="4").score
    1.0
    """
    _check_scorers(scorers, "all_of")
    members = list(scorers)
    return (
        create_scorer(
            id=id or "all_of(" + ",".join(s.id for s in members) + ")",
            description="Minimum score of all scorers",
        )
        .analyze(lambda run, **_: _run_all(members, run))
        .generate_score(lambda results, **_: min(r["score"] for r in results.analyze_step_result))
        .generate_reason(
            lambda results, **_: (
                "; ".join(r["reason"] for r in results.analyze_step_result if r["reason"]) or None
            )
        )
    )


def any_of(*scorers: Scorer, id: str | None = None) -> Scorer:
    """Best of: the maximum score, with the reason of the best scorer (the first one on a tie)."""
    _check_scorers(scorers, "any_of")
    members = list(scorers)

    def best(results: Any) -> dict[str, Any]:
        outcomes: list[dict[str, Any]] = results.analyze_step_result
        return max(outcomes, key=lambda r: r["score"])

    return (
        create_scorer(
            id=id or "any_of(" + ",".join(s.id for s in members) + ")",
            description="Maximum score of all scorers",
        )
        .analyze(lambda run, **_: _run_all(members, run))
        .generate_score(lambda results, **_: best(results)["score"])
        .generate_reason(lambda results, **_: best(results)["reason"])
    )


def weighted(
    config: Mapping[str, tuple[Scorer, float] | Mapping[str, Any]], *, id: str = "weighted"
) -> Scorer:
    """Weighted mean ``Σ score·weight / Σ weight``; the reason lists each part.

    ``config`` maps a name to ``(scorer, weight)`` or to ``{"scorer": ..., "weight": ...}``.
    """
    if not config:
        raise ValueError("weighted() needs at least one {name: (scorer, weight)} entry")
    parts: list[tuple[str, Scorer, float]] = []
    for name, entry in config.items():
        scorer, weight = (entry["scorer"], entry["weight"]) if isinstance(entry, Mapping) else entry
        _check_scorers((scorer,), "weighted")
        if not isinstance(weight, int | float) or not math.isfinite(weight) or weight <= 0:
            raise ValueError(f"weighted(): weight of {name!r} must be a finite number > 0, got {weight!r}")
        parts.append((name, scorer, float(weight)))
    total = sum(w for _, _, w in parts)

    async def analyze(run: Run, **_: Any) -> list[dict[str, Any]]:
        results = await _run_all([s for _, s, _ in parts], run)
        return [
            {"name": name, "weight": weight, **item}
            for (name, _, weight), item in zip(parts, results, strict=True)
        ]

    return (
        create_scorer(id=id, description="Weighted mean of several scorers")
        .analyze(analyze)
        .generate_score(
            lambda results, **_: sum(p["score"] * p["weight"] for p in results.analyze_step_result) / total
        )
        .generate_reason(
            lambda results, **_: ", ".join(
                f"{p['name']}: {p['score']:.2f} (w={p['weight']:g})" for p in results.analyze_step_result
            )
        )
    )
