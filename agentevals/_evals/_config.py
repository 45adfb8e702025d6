"""Scorer configuration for ``run_evals``: flat lists, workflow/step configs, thresholds and gates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentevals._model._thresholds import Threshold
from agentevals._scoring._scorer import Scorer

_TOP_LEVEL_KEYS = ("workflow", "agent", "trajectory")


@dataclass(frozen=True)
class ScorerSpec:
    """One scorer to run per item: on the whole target (``step=None``) or on one graph node."""

    scorer: Scorer
    step: str | None = None
    threshold: Threshold | None = None
    gate: bool = False

    @property
    def key(self) -> str:
        """``scorer_id`` for whole-target scorers, ``"node/scorer_id"`` for step scorers."""
        return self.scorer.id if self.step is None else f"{self.step}/{self.scorer.id}"


@dataclass(frozen=True)
class ScorerPlan:
    specs: tuple[ScorerSpec, ...]
    nested: bool  # results shaped {"workflow": {...}, "steps": {...}} as for a workflow config

    @property
    def top(self) -> list[ScorerSpec]:
        return [s for s in self.specs if s.step is None]

    @property
    def steps(self) -> list[ScorerSpec]:
        return [s for s in self.specs if s.step is not None]


def build_plan(scorers: Any, thresholds: Mapping[str, Any] | None, gates: Sequence[Any] | None) -> ScorerPlan:
    """Validate the ``scorers``/``thresholds``/``gates`` arguments of ``run_evals``."""
    specs: list[ScorerSpec] = []
    nested = False
    if isinstance(scorers, Mapping):
        unknown = set(scorers) - {*_TOP_LEVEL_KEYS, "steps"}
        if unknown:
            raise ValueError(
                f"unknown scorer config key(s) {sorted(map(str, unknown))}; use 'workflow' (or 'agent', "
                "'trajectory') for scorers of the whole target and 'steps' for {node_name: [scorers]}"
            )
        nested = "workflow" in scorers or "steps" in scorers
        for key in _TOP_LEVEL_KEYS:
            specs += [_entry(e, None, f"scorers[{key!r}]") for e in _as_list(scorers.get(key), key)]
        steps = scorers.get("steps") or {}
        if not isinstance(steps, Mapping):
            raise ValueError("scorers['steps'] must map node names to lists of scorers")
        for node, entries in steps.items():
            specs += [_entry(e, str(node), f"scorers['steps'][{node!r}]") for e in _as_list(entries, node)]
        if not specs and not gates:
            raise ValueError("At least one workflow or step scorer must be provided")
    elif isinstance(scorers, Scorer) or not isinstance(scorers, Sequence) or isinstance(scorers, str):
        raise ValueError(
            "scorers must be a list of scorers (or {'scorer': s, 'threshold': 0.7} entries), or a "
            "workflow config {'workflow': [...], 'steps': {'node': [...]}}; "
            f"got {type(scorers).__name__}"
        )
    else:
        specs = [_entry(e, None, f"scorers[{i}]") for i, e in enumerate(scorers)]
        if not specs and not gates:
            raise ValueError("At least one scorer must be provided")
    for gate in gates or []:
        specs.append(ScorerSpec(_scorer_of(gate, "gates"), gate=True, threshold=Threshold(min=1.0)))
    specs = _apply_thresholds(specs, thresholds or {})
    seen: set[str] = set()
    for spec in specs:
        if spec.key in seen:
            raise ValueError(
                f"two scorers share the id {spec.key!r}; results are keyed by id, so give one of them "
                "another id with scorer.with_id('...')"
            )
        seen.add(spec.key)
    return ScorerPlan(specs=tuple(specs), nested=nested)


def _as_list(value: Any, where: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, Scorer | Mapping) or not isinstance(value, Sequence):
        raise ValueError(f"scorers for {where!r} must be a list, got {type(value).__name__}")
    return list(value)


def _entry(entry: Any, step: str | None, where: str) -> ScorerSpec:
    if isinstance(entry, Mapping):
        if "scorer" not in entry or set(entry) - {"scorer", "threshold"}:
            raise ValueError(f"{where}: an entry is a Scorer or {{'scorer': scorer, 'threshold': 0.7}}")
        threshold = entry.get("threshold")
        return ScorerSpec(
            _scorer_of(entry["scorer"], where),
            step=step,
            threshold=None if threshold is None else Threshold.of(threshold, name=where),
        )
    return ScorerSpec(_scorer_of(entry, where), step=step)


def _scorer_of(value: Any, where: str) -> Scorer:
    if not isinstance(value, Scorer):
        hint = " (call the factory first, e.g. create_regex_scorer(r'...'))" if callable(value) else ""
        raise ValueError(f"{where}: expected a Scorer, got {type(value).__name__}{hint}")
    return value


def _apply_thresholds(specs: list[ScorerSpec], thresholds: Mapping[str, Any]) -> list[ScorerSpec]:
    keys = {s.key for s in specs}
    unknown = sorted(k for k in thresholds if k not in keys)
    if unknown:
        raise ValueError(
            f"thresholds name unknown scorer(s) {unknown}; known ids: {sorted(keys)} "
            "(step scorers are named 'node/scorer_id')"
        )
    out = []
    for spec in specs:
        if spec.key in thresholds:
            spec = ScorerSpec(
                spec.scorer,
                step=spec.step,
                threshold=Threshold.of(thresholds[spec.key], name=f"thresholds[{spec.key!r}]"),
                gate=spec.gate,
            )
        out.append(spec)
    return out
