"""Scorers made of scorers: weakest link, best of, weighted mean.

Members score the same run; their judge calls count towards the combined result. The combined result's
``analyze_step_result`` says what each member did::

    {"members": [{"scorer_id": "exact_match", "score": 0.0, "reason": "..."}, ...],   # members that scored
     "skipped": [{"scorer_id": "relevancy", "skip_reason": "decided", "reason": "..."}, ...]}

**Lazy** (``all_of`` / ``any_of``, ``lazy=True`` by default): members without an LLM judge
(``not Scorer.has_judge``; a nested combinator counts as judged when any of its members is) run first;
when they already decide the result, the judged members are not run at all and are listed under
``skipped`` with ``skip_reason="decided"``. ``all_of`` is decided by a code member scoring 0 (or less),
``any_of`` by one scoring 1 (or more): with scores in [0, 1] no judge can change the minimum, resp. the
maximum, from there. Otherwise the judged members run (concurrently) and the result is the same as with
``lazy=False``, which runs every member at once. ``weighted`` is never lazy: every weight is > 0, so each
member's score moves the mean and none can be left out without changing the result (gate it instead:
``all_of(code_gate, weighted(...))`` skips the judges of the weighted part when the gate scores 0).

**Members that skip the run** (a step raised :class:`~agentevals.steps.SkipRun`, e.g. no ground truth)
are left out of the combination, as ``run_evals`` leaves skipped runs out of a mean, and listed under
``skipped`` with their own ``skip_reason`` and message; a skipped member decides nothing. When every
member skips (or the ones that ran all skipped and the rest were not needed), the combinator itself
skips the run with ``skip_reason`` the members' common reason (``"members_skipped"`` when they differ).
A member that fails (any other error) fails the combinator.

Combinations of sync members only stay sync (``Scorer.is_sync``): the members are awaited one after the
other without ever suspending, so the engine scores them inline like any plain code scorer.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentevals._model._errors import ScorerSkipped, SkipRun
from agentevals._model._run import Run
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import StepResults

Outcome = dict[str, Any]
"""What one member did: ``{"scorer_id", "score", "reason"}`` or ``{"scorer_id", "skip_reason", "reason"}``."""


def _check_scorers(scorers: tuple[Scorer, ...], what: str) -> None:
    if not scorers:
        raise ValueError(f"{what}() needs at least one scorer")
    for s in scorers:
        if not isinstance(s, Scorer):
            raise TypeError(f"{what}() takes Scorer objects, got {type(s).__name__}")


def _judged(scorer: Scorer) -> bool:
    """Whether scoring ``scorer`` may call an LLM judge (a nested combinator: when any member may)."""
    if scorer.has_judge:
        return True
    analyze = scorer._steps.get("analyze")
    step = analyze.function.fn if analyze is not None and analyze.function is not None else None
    combination = getattr(step, _COMBINATION, None)
    return isinstance(combination, _Combination) and combination.judged


_COMBINATION = "_agentevals_combination"  # marks a combinator's analyze step with its _Combination


@dataclass(frozen=True)
class _Member:
    scorer: Scorer
    extra: Mapping[str, Any] = field(default_factory=dict)  # weighted(): the member's name and weight
    judged: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "judged", _judged(self.scorer))


@dataclass(frozen=True)
class _Combination:
    """Scores the members of a combinator (code ones first when lazy): its analyze step.

    ``decides(score)`` tells whether a code member's score fixes the result (``None``: never lazy).
    Plain data, so the combinator's version (a digest of its configuration) follows its members.
    """

    what: str
    members: list[_Member]
    decides: Callable[[float], bool] | None
    judged: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "judged", any(m.judged for m in self.members))

    def step(self) -> Callable[..., Any]:
        """The analyze step: sync (returning the coroutine, which never suspends) when every member is
        sync, so the combinator stays a sync scorer; async otherwise."""
        if all(m.scorer.is_sync for m in self.members):

            def analyze(run: Run, **_: Any) -> Coroutine[Any, Any, dict[str, list[Outcome]]]:
                return self.score(run)

            setattr(analyze, _COMBINATION, self)
            return analyze

        async def analyze_async(run: Run, **_: Any) -> dict[str, list[Outcome]]:
            return await self.score(run)

        setattr(analyze_async, _COMBINATION, self)
        return analyze_async

    async def score(self, run: Run) -> dict[str, list[Outcome]]:
        members = self.members
        if self.decides is None or not self.judged:
            phases = [list(range(len(members)))]
        else:
            phases = [
                [i for i, m in enumerate(members) if not m.judged],
                [i for i, m in enumerate(members) if m.judged],
            ]
        outcomes: dict[int, Outcome] = {}
        decided_by: Outcome | None = None
        for phase in phases:
            if decided_by is not None:
                why = (
                    f"{self.what} was decided by {decided_by['scorer_id']!r} scoring {decided_by['score']:g}"
                )
                outcomes |= {
                    i: {"scorer_id": members[i].scorer.id, "skip_reason": "decided", "reason": why}
                    for i in phase
                }
                continue
            for i, outcome in zip(phase, await _score_all([members[i] for i in phase], run), strict=True):
                outcomes[i] = outcome
            decides = self.decides
            if decides is not None:
                scored = (outcomes[i] for i in phase if "score" in outcomes[i])
                decided_by = next((o for o in scored if decides(o["score"])), None)
        ordered = [{**members[i].extra, **outcomes[i]} for i in range(len(members))]
        ran = [o for o in ordered if "score" in o]
        skipped = [o for o in ordered if "score" not in o]
        if not ran:
            reasons = {o["skip_reason"] for o in skipped}
            raise SkipRun(
                f"every member of {self.what} skipped the run: "
                + "; ".join(f"{o['scorer_id']}: {o['reason']}" for o in skipped),
                reason=reasons.pop() if len(reasons) == 1 else "members_skipped",
            )
        return {"members": ran, "skipped": skipped}


async def _score_all(members: Sequence[_Member], run: Run) -> list[Outcome]:
    """Each member's outcome, in the order given: concurrently, or one by one when all are sync (no
    task, no suspension: the caller finishes without waiting)."""
    if all(m.scorer.is_sync for m in members):
        return [await _outcome(m.scorer, run) for m in members]
    return list(await asyncio.gather(*(_outcome(m.scorer, run) for m in members)))


async def _outcome(scorer: Scorer, run: Run) -> Outcome:
    try:
        result = await scorer.score(run)
    except ScorerSkipped as skipped:
        return {"scorer_id": scorer.id, "skip_reason": skipped.skip_reason, "reason": skipped.message}
    return {"scorer_id": result.scorer_id, "score": result.score, "reason": result.reason}


def _at_most_zero(score: float) -> bool:
    return score <= 0.0


def _at_least_one(score: float) -> bool:
    return score >= 1.0


def _scored(results: StepResults) -> list[Outcome]:
    members: list[Outcome] = results.analyze_step_result["members"]
    return members


def all_of(*scorers: Scorer, id: str | None = None, lazy: bool = True) -> Scorer:
    """Weakest link: the minimum score; the reasons joined with ``"; "``.

    ``lazy`` (default): code members run first, and judged members are skipped when a code member
    scores 0 (see the module docstring for skipped members and the step result).

    >>> from agentevals.scorers import create_exact_match_scorer, create_includes_scorer
    >>> both = all_of(create_exact_match_scorer(), create_includes_scorer())
    >>> both.run_sync(input="2+2?", output="4", ground_truth="4").score
    1.0
    """
    _check_scorers(scorers, "all_of")
    name = id or "all_of(" + ",".join(s.id for s in scorers) + ")"
    members = [_Member(s) for s in scorers]
    return (
        create_scorer(id=name, description="Minimum score of all scorers")
        .analyze(_Combination("all_of", members, _at_most_zero if lazy else None).step())
        .generate_score(lambda results, **_: min(r["score"] for r in _scored(results)))
        .generate_reason(
            lambda results, **_: "; ".join(r["reason"] for r in _scored(results) if r["reason"]) or None
        )
    )


def any_of(*scorers: Scorer, id: str | None = None, lazy: bool = True) -> Scorer:
    """Best of: the maximum score, with the reason of the best scorer (the first one on a tie).

    ``lazy`` (default): code members run first, and judged members are skipped when a code member
    scores 1 (see the module docstring for skipped members and the step result).
    """
    _check_scorers(scorers, "any_of")
    name = id or "any_of(" + ",".join(s.id for s in scorers) + ")"
    members = [_Member(s) for s in scorers]

    def best(results: StepResults) -> Outcome:
        return max(_scored(results), key=lambda r: r["score"])

    return (
        create_scorer(id=name, description="Maximum score of all scorers")
        .analyze(_Combination("any_of", members, _at_least_one if lazy else None).step())
        .generate_score(lambda results, **_: best(results)["score"])
        .generate_reason(lambda results, **_: best(results)["reason"])
    )


def weighted(
    config: Mapping[str, tuple[Scorer, float] | Mapping[str, Any]], *, id: str = "weighted"
) -> Scorer:
    """Weighted mean ``Σ score·weight / Σ weight``; the reason lists each part.

    ``config`` maps a name to ``(scorer, weight)`` or to ``{"scorer": ..., "weight": ...}``. Every member
    runs (concurrently): a weighted mean is never decided early, see the module docstring. A member that
    skips the run is left out, and the mean is taken over the weights of the members that scored.
    """
    if not config:
        raise ValueError("weighted() needs at least one {name: (scorer, weight)} entry")
    members: list[_Member] = []
    for name, entry in config.items():
        scorer, weight = (entry["scorer"], entry["weight"]) if isinstance(entry, Mapping) else entry
        _check_scorers((scorer,), "weighted")
        if not isinstance(weight, int | float) or not math.isfinite(weight) or weight <= 0:
            raise ValueError(f"weighted(): weight of {name!r} must be a finite number > 0, got {weight!r}")
        members.append(_Member(scorer, {"name": name, "weight": float(weight)}))

    def mean(results: StepResults, **_: Any) -> float:
        parts = _scored(results)
        total: float = sum(p["score"] * p["weight"] for p in parts)
        weights: float = sum(p["weight"] for p in parts)
        return total / weights

    def reason(results: StepResults, **_: Any) -> str:
        outcome = results.analyze_step_result
        parts = {p["name"]: f"{p['score']:.2f} (w={p['weight']:g})" for p in outcome["members"]}
        parts |= {p["name"]: f"skipped ({p['skip_reason']})" for p in outcome["skipped"]}
        return ", ".join(f"{name}: {parts[name]}" for name in config)

    return (
        create_scorer(id=id, description="Weighted mean of several scorers")
        .analyze(_Combination("weighted", members, None).step())
        .generate_score(mean)
        .generate_reason(reason)
    )
