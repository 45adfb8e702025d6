"""A threshold: the bounds a score must meet to pass."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Threshold:
    """Bounds a score must meet: a number means ``min``; a mapping may give ``min`` and/or ``max``.

    >>> Threshold.of(0.7).check(0.8), Threshold.of({"max": 0.2}).check(0.5)
    (True, False)
    """

    min: float | None = None
    max: float | None = None

    @classmethod
    def of(cls, value: Any, *, name: str = "threshold") -> Threshold:
        if isinstance(value, Threshold):
            return value
        if isinstance(value, bool) or not isinstance(value, int | float | Mapping):
            raise ValueError(f"{name}: a threshold is a number (the minimum) or {{'min': .., 'max': ..}}")
        if isinstance(value, Mapping):
            unknown = set(value) - {"min", "max"}
            if unknown:
                raise ValueError(f"{name}: unknown threshold key(s) {sorted(unknown)}; use 'min' and 'max'")
            low, high = value.get("min"), value.get("max")
        else:
            low, high = value, None
        for bound in (low, high):
            if bound is not None and (
                isinstance(bound, bool) or not isinstance(bound, int | float) or not math.isfinite(bound)
            ):
                raise ValueError(f"{name}: threshold bounds must be finite numbers, got {bound!r}")
        if low is None and high is None:
            raise ValueError(f"{name}: a threshold needs 'min' or 'max'")
        if low is not None and high is not None and low > high:
            raise ValueError(f"{name}: threshold min ({low}) is greater than max ({high})")
        return cls(min=None if low is None else float(low), max=None if high is None else float(high))

    def check(self, score: float | None) -> bool:
        if score is None:
            return False
        return (self.min is None or score >= self.min) and (self.max is None or score <= self.max)

    def __str__(self) -> str:
        if self.max is None:
            return f">= {self.min:g}"
        if self.min is None:
            return f"<= {self.max:g}"
        return f"in [{self.min:g}, {self.max:g}]"
