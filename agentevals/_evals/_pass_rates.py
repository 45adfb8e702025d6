"""Pass rates in ``agentevals report``: the thresholds ``--pass-threshold`` gives, and what a rate says."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentevals._model._thresholds import Threshold


@dataclass(frozen=True)
class PassRate:
    """How many of one scorer's records met its ``threshold`` (``"stored"``: the one a live engine or an
    evaluation stored for it; ``"option"``: ``--pass-threshold``): ``rate`` is ``passed / (scores +
    errored)``, as ``run_evals`` counts it (an errored record counts as not passed, a skipped one is
    left out)."""

    scorer_id: str
    threshold: str
    origin: str
    scores: int
    errored: int
    passed: int
    rate: float | None


@dataclass(frozen=True)
class PassThresholds:
    """``--pass-threshold`` values: per scorer, and one for every other scorer (``default``); a scorer
    named in neither uses its stored threshold.

    >>> PassThresholds.parse(["0.6", "exact_match=0.8"]).of("exact_match"), PassThresholds.parse([]).default
    (Threshold(min=0.8, max=None), None)
    """

    per_scorer: dict[str, Threshold] = field(default_factory=dict)
    default: Threshold | None = None

    @classmethod
    def parse(cls, values: Sequence[str]) -> PassThresholds:
        """From ``MIN`` / ``SCORER=MIN`` texts; a ``ValueError`` saying what is wrong."""
        per_scorer: dict[str, Threshold] = {}
        default = None
        for value in values:
            name, _, number = value.rpartition("=")
            try:
                threshold = Threshold.of(float(number), name=f"--pass-threshold {value!r}")
            except ValueError:
                raise ValueError(
                    f"--pass-threshold {value!r}: expected MIN or SCORER=MIN, e.g. exact_match=0.8"
                ) from None
            if name:
                per_scorer[name] = threshold
            else:
                default = threshold
        return cls(per_scorer, default)

    def of(self, scorer_id: str) -> Threshold | None:
        return self.per_scorer.get(scorer_id, self.default)
