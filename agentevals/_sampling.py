"""Sampling policies: decide, before any work, whether a scorer scores a run.

``ratio`` sampling is deterministic: it hashes ``trace_id or run_id`` (with no scorer in the key) to a
point in [0, 1) and samples when the point is below the rate. So the same run is sampled the same way
in every process, every scorer at one rate samples the same runs, and a lower rate's sample is a
subset of a higher rate's sample (comparable scores across scorers, unlike ``Math.random() < rate``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agentevals._run import Run

SamplingKind = Literal["none", "ratio", "custom"]
Sampler = Callable[[Run], bool]

_SCALE = float(1 << 64)


def sample_point(key: str) -> float:
    """The stable point in [0, 1) of a run key (``trace_id or run_id``); the same in every process.

    >>> sample_point("run-1") == sample_point("run-1") and 0.0 <= sample_point("run-1") < 1.0
    True
    """
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / _SCALE


def run_key(run: Run) -> str:
    """The sampling key of a run: its trace id when it has one (so a trace is sampled as a whole)."""
    return run.trace_id or run.run_id


@dataclass(frozen=True, slots=True)
class Sampling:
    """When a scorer scores a run: ``always()``, ``ratio(rate)`` or ``custom(fn)``.

    >>> from agentevals import Run
    >>> Sampling.ratio(1.0).sampled(Run(output="x"))
    True
    >>> Sampling.ratio(0.0).sampled(Run(output="x"))
    False
    >>> Sampling.of({"type": "ratio", "rate": 0.25}) == Sampling.ratio(0.25)
    True
    """

    kind: SamplingKind = "none"
    rate: float = 1.0
    fn: Sampler | None = None

    def __post_init__(self) -> None:
        if isinstance(self.rate, bool) or not isinstance(self.rate, int | float):
            raise ValueError(f"a sampling rate must be a number in [0, 1], got {self.rate!r}")
        if not (math.isfinite(self.rate) and 0.0 <= self.rate <= 1.0):
            raise ValueError(
                f"a sampling rate must be in [0, 1], got {self.rate!r}; use 0.25 for 25% of runs"
            )
        if self.kind == "custom" and not callable(self.fn):
            raise ValueError("custom sampling needs a callable `(run) -> bool`")

    @classmethod
    def always(cls) -> Sampling:
        """Score every run (the default; Mastra's ``{"type": "none"}``)."""
        return cls("none", 1.0)

    @classmethod
    def ratio(cls, rate: float) -> Sampling:
        """Score the share ``rate`` of runs, chosen deterministically by trace id or run id."""
        return cls("ratio", rate)

    @classmethod
    def custom(cls, fn: Sampler) -> Sampling:
        """Score the runs for which ``fn(run)`` is true (an exception counts as not sampled)."""
        return cls("custom", 1.0, fn)

    @classmethod
    def of(cls, value: Any) -> Sampling:
        """Accept a ``Sampling``, ``None`` (always), a rate, a callable or a Mastra-style mapping."""
        if isinstance(value, Sampling):
            return value
        if value is None:
            return cls.always()
        if isinstance(value, int | float) and not isinstance(value, bool):
            return cls.ratio(float(value))
        if isinstance(value, Mapping):
            kind = value.get("type", "none")
            if kind == "none":
                return cls.always()
            if kind == "ratio":
                if "rate" not in value:
                    raise ValueError('ratio sampling needs a rate: {"type": "ratio", "rate": 0.25}')
                return cls.ratio(value["rate"])
            raise ValueError(f'unknown sampling type {kind!r}; use "none" or "ratio", or pass a callable')
        if callable(value):
            return cls.custom(value)
        raise ValueError(
            f"cannot use {value!r} as sampling; pass Sampling.ratio(0.25), "
            '{"type": "ratio", "rate": 0.25}, a rate, or a callable (run) -> bool'
        )

    def sampled(self, run: Run, point: float | None = None) -> bool:
        """Whether ``run`` is sampled; ``point`` is its precomputed :func:`sample_point`, if known."""
        if self.kind == "none":
            return True
        if self.kind == "ratio":
            if self.rate >= 1.0:
                return True
            if self.rate <= 0.0:
                return False
            if point is None:
                point = sample_point(run_key(run))
            return point < self.rate
        assert self.fn is not None
        return bool(self.fn(run))
