"""Each scorer's pass threshold in the viewer: ``--pass-threshold`` when given, else the one the store
keeps (``agentevals_scorers``), else the default; and where it came from.

>>> from agentevals._model._thresholds import Threshold
>>> Bound(0.7, None, "stored").label, Bound(None, 0.2, "default").label, Bound(0.2, 0.8, "stored").label
('≥ 0.7', '≤ 0.2', '0.2 – 0.8')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agentevals._evals._catalog import ScorerEntryInfo, latest_thresholds
from agentevals._model._thresholds import Threshold

Origin = Literal["--pass-threshold", "stored", "default"]

#: What each origin means, for the hint beside a threshold.
ORIGINS: dict[str, str] = {
    "--pass-threshold": "given on the command line (--pass-threshold)",
    "stored": "the threshold the store keeps for this scorer (its engine or evaluation declared it)",
    "default": "the default: no --pass-threshold and no threshold stored for this scorer",
}


@dataclass(frozen=True)
class Bound:
    """A scorer's pass bounds (a score passes when ``low <= score <= high``; ``None``: no bound)."""

    low: float | None
    high: float | None
    origin: Origin

    @property
    def label(self) -> str:
        if self.low is not None and self.high is not None:
            return f"{self.low:g} – {self.high:g}"
        if self.high is not None:
            return f"≤ {self.high:g}"
        return f"≥ {self.low if self.low is not None else -math.inf:g}"

    @property
    def explained(self) -> str:
        return ORIGINS[self.origin]

    def sql(self) -> tuple[float, float]:
        """``(low, high)`` as SQL parameters (a missing bound: an infinity)."""
        return (
            -math.inf if self.low is None else self.low,
            math.inf if self.high is None else self.high,
        )


def in_scope(stored: Sequence[ScorerEntryInfo], eval_id: str | None) -> dict[str, Threshold]:
    """Per scorer (``"node/scorer_id"`` for an evaluation's step scorer), the stored threshold that
    applies: evaluation ``eval_id``'s own, else the live engine's, else the newest stored. ``stored``
    is :func:`~agentevals._evals._catalog.stored_scorers` (newest first); in each of these the latest
    declaration counts (one without a threshold leaves it to the next)."""
    tiers: list[list[ScorerEntryInfo]] = []
    if eval_id is not None:
        tiers.append([info for info in stored if info.eval_id == eval_id])
    tiers += [[info for info in stored if info.source == "live"], list(stored)]
    chosen: dict[str, Threshold] = {}
    for tier in tiers:
        for key, threshold in latest_thresholds(tier).items():
            chosen.setdefault(key, threshold)
    return chosen
