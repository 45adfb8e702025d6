"""``EngineStats``: a snapshot of the engine's counters."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class EngineStats:
    """Counters since the engine started. Runs: ``submitted`` = ``accepted`` + ``sampled_out`` +
    ``dropped`` + ``invalid`` (+ refused after shutdown). Pairs (run × scorer): ``scored`` (results),
    ``failed`` (error records: raised, timed out). ``queued``: runs waiting now. ``sink_errors``: failed
    write attempts (retried); ``dead_lettered``: records written to the dead-letter file; ``lost``:
    records that could not even be dead-lettered. Latency: submit → record ready, milliseconds.
    ``sampled``: per scorer, the runs it sampled (the coverage numerator; ``submitted`` minus
    ``invalid`` and refused is the denominator).
    """

    submitted: int = 0
    accepted: int = 0
    sampled_out: int = 0
    queued: int = 0
    scored: int = 0
    failed: int = 0
    dropped: int = 0
    invalid: int = 0
    sink_errors: int = 0
    dead_lettered: int = 0
    lost: int = 0
    latency_ms_p50: float | None = None
    latency_ms_p95: float | None = None
    latency_ms_p99: float | None = None
    sampled: dict[str, int] = field(default_factory=dict)


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile of already sorted values (``None`` when empty)."""
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]
