"""Engine configuration: one ``ScorerEntry`` per attached scorer, from the shapes users write."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agentevals._engine._options import is_number
from agentevals._engine._sampling import Sampling
from agentevals._model._thresholds import Threshold
from agentevals._scoring._limits._budget import Budget
from agentevals._scoring._scorer import Scorer

_ENTRY_KEYS = frozenset(
    {"scorer", "sampling", "timeout", "max_concurrency", "score_errors", "budget", "threshold"}
)


@dataclass(frozen=True)
class ScorerEntry:
    """A scorer attached to the engine, with its sampling, timeout and concurrency limit.

    ``sampling`` accepts what :meth:`Sampling.of` does (``{"type": "ratio", "rate": 0.25}``, a rate, a
    callable ``(run) -> bool``, rules ``{"type": "rules", "rules": [...]}``); ``timeout`` (seconds) and
    ``max_concurrency`` default to the engine's :class:`~agentevals.engine.ScoringOptions`.
    ``score_errors``: whether the scorer scores runs that failed (``run.error`` set: the agent raised);
    by default such a run gets a skipped record (``skip_reason="run_failed"``) from this scorer.
    ``budget``: a :class:`~agentevals.engine.Budget` (or a dict of its fields) on this scorer's judge
    spend, e.g. ``{"calls": 50, "per": "hour"}``.
    ``threshold``: the score a run must reach to pass, a number (the minimum) or ``{"min": .., "max":
    ..}`` as in ``run_evals``; it changes no scoring: SQL sinks store it (``agentevals_scorers``) when
    the engine starts, for ``agentevals report`` and ``agentevals view`` to judge pass rates by.

    >>> from agentevals import create_scorer
    >>> s = create_scorer(id="len").generate_score(lambda run, **_: float(len(run.output_text) < 50))
    >>> ScorerEntry(scorer=s, sampling=Sampling.ratio(0.25), timeout=5.0).sampling.rate
    0.25
    """

    scorer: Scorer
    sampling: Sampling = field(default_factory=Sampling.always)
    timeout: float | None = None
    max_concurrency: int | None = None
    score_errors: bool = False
    budget: Budget | None = None
    threshold: Threshold | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.scorer, Scorer):
            raise TypeError(
                f"expected a Scorer (from create_scorer or agentevals.scorers), got {self.scorer!r}"
            )
        object.__setattr__(self, "sampling", Sampling.of(self.sampling))
        if self.timeout is not None and not (
            is_number(self.timeout) and math.isfinite(self.timeout) and self.timeout > 0
        ):
            raise ValueError(f"timeout must be a positive number of seconds or None, got {self.timeout!r}")
        if self.max_concurrency is not None and (
            isinstance(self.max_concurrency, bool)
            or not isinstance(self.max_concurrency, int)
            or self.max_concurrency < 1
        ):
            raise ValueError(f"max_concurrency must be a positive int or None, got {self.max_concurrency!r}")
        if not isinstance(self.score_errors, bool):
            raise ValueError(f"score_errors must be True or False, got {self.score_errors!r}")
        if self.budget is not None:
            object.__setattr__(self, "budget", Budget.of(self.budget))
        if self.threshold is not None:
            object.__setattr__(self, "threshold", Threshold.of(self.threshold, name="threshold"))


def normalize_scorers(scorers: Any) -> dict[str, ScorerEntry]:
    """``{key: ScorerEntry}`` from a mapping, a list of scorers/entries, or one scorer.

    A mapping key that differs from the scorer's id becomes the id of the records it produces, so two
    variants of one prebuilt scorer can be attached side by side.
    """
    if isinstance(scorers, Scorer | ScorerEntry):
        scorers = [scorers]
    entries: dict[str, ScorerEntry] = {}
    if isinstance(scorers, Mapping):
        for key, value in scorers.items():
            if not isinstance(key, str) or not key:
                raise ValueError(f"scorer keys must be non-empty strings, got {key!r}")
            entries[key] = _entry(value, key)
    elif isinstance(scorers, Sequence) and not isinstance(scorers, str):
        for value in scorers:
            entry = _entry(value, None)
            if entry.scorer.id in entries:
                raise ValueError(
                    f"two scorers share the id {entry.scorer.id!r}; give one another id with "
                    "scorer.with_id('new-id') or pass a dict {'key': scorer}"
                )
            entries[entry.scorer.id] = entry
    else:
        raise TypeError(
            "scorers must be a dict {'name': scorer or {'scorer': s, 'sampling': {...}}}, a list of "
            f"scorers, or one scorer; got {type(scorers).__name__}"
        )
    if not entries:
        raise ValueError("the engine needs at least one scorer")
    return entries


def _entry(value: Any, key: str | None) -> ScorerEntry:
    if isinstance(value, ScorerEntry):
        entry = value
    elif isinstance(value, Scorer):
        entry = ScorerEntry(scorer=value)
    elif isinstance(value, Mapping):
        unknown = sorted(set(value) - _ENTRY_KEYS)
        if unknown:
            raise ValueError(f"unknown scorer entry key(s) {unknown}; expected some of {sorted(_ENTRY_KEYS)}")
        if "scorer" not in value:
            raise ValueError("a scorer entry needs 'scorer': {'scorer': s, 'sampling': {...}}")
        entry = ScorerEntry(**dict(value))
    else:
        raise TypeError(f"cannot attach {value!r}: pass a Scorer, a ScorerEntry or {{'scorer': s, ...}}")
    if key is not None and key != entry.scorer.id:
        scorer = entry.scorer.with_id(key, entry.scorer.name)
        entry = replace(entry, scorer=scorer)
    return entry
