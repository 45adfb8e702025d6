"""Sampling policies: decide, before any work, whether a scorer scores a run.

``ratio`` sampling is deterministic: it hashes ``trace_id or run_id`` (with no scorer in the key) to a
point in [0, 1) and samples when the point is below the rate. So the same run is sampled the same way
in every process, every scorer at one rate samples the same runs, and a lower rate's sample is a
subset of a higher rate's sample (comparable scores across scorers, unlike ``Math.random() < rate``).
``rules`` sampling (:mod:`agentevals._engine._sampling_rules`) gives each run the rate of the first rule it
matches, on the same point.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentevals._engine._sampling_rules import Rule, RuleSet, check_rate
from agentevals._model._run import Run

SamplingKind = Literal["none", "ratio", "custom", "rules"]
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
    """When a scorer scores a run: ``always()``, ``ratio(rate)``, ``custom(fn)`` or ``rules([...])``.

    >>> from agentevals import Run
    >>> Sampling.ratio(1.0).sampled(Run(output="x"))
    True
    >>> Sampling.ratio(0.0).sampled(Run(output="x"))
    False
    >>> Sampling.of({"type": "ratio", "rate": 0.25}) == Sampling.ratio(0.25)
    True
    >>> policy = Sampling.of({"type": "rules", "rules": [{"when": {"error": True}, "rate": 1.0}]})
    >>> policy.sampled(Run(output="x", error="boom")), policy.sampled(Run(output="x"))
    (True, False)
    """

    kind: SamplingKind = "none"
    rate: float = 1.0
    fn: Sampler | None = None
    ruleset: RuleSet | None = None

    def __post_init__(self) -> None:
        check_rate(self.rate)
        if self.kind == "custom" and not callable(self.fn):
            raise ValueError("custom sampling needs a callable `(run) -> bool`")
        if self.kind == "rules" and not isinstance(self.ruleset, RuleSet):
            raise ValueError("rule sampling needs its rules: use Sampling.rules([...])")

    @classmethod
    def always(cls) -> Sampling:
        """Score every run (the default; as a mapping, ``{"type": "none"}``)."""
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
    def rules(cls, rules: Iterable[Rule | Mapping[str, Any]]) -> Sampling:
        """Ordered rules, first match wins: a run gets the rate of the first :class:`Rule` whose
        predicate holds (deterministic by trace id or run id, as ``ratio``); a run matching no rule is
        not sampled, so end with a catch-all rule (no ``when``), e.g. ``Rule(rate=0.01)``.

        >>> from agentevals import Run
        >>> policy = Sampling.rules([
        ...     Rule(when={"any": [{"error": True}, {"tool_failed": True}]}, rate=1.0, name="failures"),
        ...     {"when": {"metadata.feedback": "negative"}, "rate": 1.0},
        ...     {"when": {"entity": "checkout"}, "rate": 0.2},
        ...     Rule(rate=0.01),
        ... ])
        >>> policy.ruleset.names
        ('failures', 'metadata.feedback=negative', 'entity=checkout', 'otherwise')
        >>> policy.sampled(Run(output="sorry", metadata={"feedback": "negative"}))
        True
        """
        return cls("rules", 1.0, None, RuleSet(rules))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Sampling:
        """The policy in a JSON or YAML file (``.json``; anything else is read as YAML): a mapping
        :meth:`of` accepts (``{"type": "rules", "rules": [...]}``, ``{"type": "ratio", ...}``) or a
        bare list of rules. A file that cannot be parsed or holds a bad policy is a ``ValueError``
        naming the file; a missing file is an ``OSError``."""
        text = Path(path).read_text(encoding="utf-8")
        if str(path).endswith(".json"):
            try:
                data = json.loads(text)
            except ValueError as err:
                raise ValueError(f"sampling file {path}: not valid JSON: {err}") from None
        else:
            import yaml

            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError as err:
                raise ValueError(f"sampling file {path}: not valid YAML: {err}") from None
        if data is None:
            raise ValueError(f'sampling file {path} is empty; write e.g. {{"type": "rules", "rules": [...]}}')
        try:
            return cls.of(data)
        except ValueError as err:
            raise ValueError(f"sampling file {path}: {err}") from None

    @classmethod
    def of(cls, value: Any) -> Sampling:
        """Accept a ``Sampling``, ``None`` (always), a rate, a callable, a mapping (``{"type": "none"}``,
        ``{"type": "ratio", "rate": r}`` or ``{"type": "rules", "rules": [...]}``) or a list of rules."""
        if isinstance(value, Sampling):
            return value
        if value is None:
            return cls.always()
        if isinstance(value, int | float) and not isinstance(value, bool):
            return cls.ratio(float(value))
        if isinstance(value, Mapping):
            kind = value.get("type", "rules" if "rules" in value else "none")
            if kind == "none":
                return cls.always()
            if kind == "ratio":
                if "rate" not in value:
                    raise ValueError('ratio sampling needs a rate: {"type": "ratio", "rate": 0.25}')
                return cls.ratio(value["rate"])
            if kind == "rules":
                unknown = sorted(str(k) for k in value if k not in ("type", "rules"))
                if unknown or "rules" not in value:
                    raise ValueError(
                        "rule sampling is {'type': 'rules', 'rules': [...]}, "
                        f"got the key(s) {sorted(str(k) for k in value)}"
                    )
                return cls.rules(value["rules"])
            raise ValueError(
                f'unknown sampling type {kind!r}; use "none", "ratio" or "rules", or pass a callable'
            )
        if isinstance(value, list | tuple):
            return cls.rules(value)
        if callable(value):
            return cls.custom(value)
        raise ValueError(
            f"cannot use {value!r} as sampling; pass Sampling.ratio(0.25), "
            '{"type": "ratio", "rate": 0.25}, a rate, Sampling.rules([...]) or a callable (run) -> bool'
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
        if self.ruleset is not None:
            if point is None:
                point = sample_point(run_key(run))
            verdict = self.ruleset.verdict(run, point)  # -1 when no rule matched, odd when sampled
            return verdict >= 0 and verdict & 1 == 1
        assert self.fn is not None
        return bool(self.fn(run))
