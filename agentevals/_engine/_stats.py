"""``EngineStats``: a snapshot of the engine's counters; ``FlushReport``: what a flush or shutdown settled."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentevals._scoring._limits._breaker import BreakerStatus
from agentevals._scoring._limits._budget import BudgetUsage

if TYPE_CHECKING:
    from agentevals._engine._config import ScorerEntry


@dataclass(frozen=True)
class EngineStats:
    """Counters since the engine started; once the engine is idle (after a flush or a shutdown) they add
    up exactly, as :meth:`unbalanced` checks.

    Runs offered: ``submitted`` = ``accepted`` + ``sampled_out`` + ``invalid`` + ``dropped_overflow``
    (the queue was full, ``drop_newest``) + ``dropped_shutdown`` (offered after shutdown).

    Runs accepted: ``accepted`` = ``finished`` (every sampled scorer produced its record) +
    ``dropped_evicted`` (pushed out of a full queue by a newer run, ``drop_oldest``) + ``abandoned``
    (given up when a shutdown ran out of time) + ``queued`` (waiting) + ``scoring`` (being scored).
    ``dropped`` is ``dropped_overflow + dropped_evicted + dropped_shutdown + dropped_unsent``.

    With ``broker=`` runs are published instead of scored: ``accepted`` + ``recovered`` (runs found in
    the spool, left by an engine that stopped) = ``published`` (the broker confirmed them) +
    ``dropped_evicted`` + ``dropped_unsent`` (the spool was full, or the run could not be built) +
    ``abandoned`` (held in memory when a shutdown ran out of time) + ``queued`` + ``forwarding`` (taken by
    the forwarder, waiting in memory or in the spool). ``spooled`` counts runs written to the spool.

    Records (one per run and sampled scorer): ``records`` = ``scored`` (results) + ``failed`` (error
    records: raised, timed out, run could not be built) + ``skipped`` (an input the scorer needs was
    absent, or the run failed and the scorer does not score failed runs; per scorer in
    ``skipped_by_scorer``). Each record goes to every sink, and each copy
    ends as ``written[sink]``, ``dead_lettered`` (appended to the dead-letter file), ``lost`` (not even
    that worked) or is still ``buffered``: ``records * len(written)`` = ``sum(written.values())`` +
    ``dead_lettered`` + ``lost`` + ``buffered``. ``sink_errors`` counts failed write attempts (retried).

    ``latency_ms_*``: submit → record ready. ``sampled``: per scorer, the runs it sampled.
    ``budgets``: each judge budget's state by its label (spent, reserved, judge calls refused);
    ``breakers``: each judge model's circuit breaker (state, times opened, calls refused). A refused
    call skips its run (``skip_reason`` ``"budget"`` or ``"judge_unavailable"``, in ``skipped``).
    ``sampled_by_rule``: per scorer with rule sampling, per rule (its name), ``{"matched": n,
    "sampled": m}``: the runs whose first matching rule it was, and those it sampled (counted when the
    engine decides, before the queue's overflow check; runs matching no rule are in neither).
    """

    submitted: int = 0
    accepted: int = 0
    sampled_out: int = 0
    invalid: int = 0
    dropped: int = 0
    dropped_overflow: int = 0
    dropped_evicted: int = 0
    dropped_shutdown: int = 0
    queued: int = 0
    scoring: int = 0
    finished: int = 0
    abandoned: int = 0
    scored: int = 0
    failed: int = 0
    skipped: int = 0
    written: dict[str, int] = field(default_factory=dict)
    buffered: int = 0
    sink_errors: int = 0
    dead_lettered: int = 0
    lost: int = 0
    latency_ms_p50: float | None = None
    latency_ms_p95: float | None = None
    latency_ms_p99: float | None = None
    sampled: dict[str, int] = field(default_factory=dict)
    skipped_by_scorer: dict[str, int] = field(default_factory=dict)
    published: int = 0
    spooled: int = 0
    recovered: int = 0
    dropped_unsent: int = 0
    forwarding: int = 0
    budgets: dict[str, BudgetUsage] = field(default_factory=dict)
    breakers: dict[str, BreakerStatus] = field(default_factory=dict)
    sampled_by_rule: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)

    @property
    def records(self) -> int:
        """Records produced: ``scored + failed + skipped``."""
        return self.scored + self.failed + self.skipped

    def unbalanced(self) -> list[str]:
        """The accounting equations above that do not hold, as text (empty when every run and every
        record is accounted for; only meaningful while the engine is idle or stopped).

        >>> EngineStats(submitted=2, accepted=1, sampled_out=1, finished=1, scored=1).unbalanced()
        []
        """
        problems = []
        offered = (
            self.accepted + self.sampled_out + self.invalid + self.dropped_overflow + self.dropped_shutdown
        )
        if self.submitted != offered:
            problems.append(f"submitted {self.submitted} != accepted + sampled_out + invalid + overflow + "
                            f"after shutdown = {offered}")  # fmt: skip
        ended = self.finished + self.dropped_evicted + self.abandoned + self.queued + self.scoring
        ended += self.published + self.dropped_unsent + self.forwarding  # with broker=
        if self.accepted + self.recovered != ended:
            problems.append(f"accepted + recovered {self.accepted + self.recovered} != finished + "
                            "published + evicted + unsent + abandoned + queued + scoring + forwarding = "
                            f"{ended}")  # fmt: skip
        if self.skipped != sum(self.skipped_by_scorer.values()):
            problems.append(
                f"skipped {self.skipped} != sum(skipped_by_scorer) = {sum(self.skipped_by_scorer.values())}"
            )
        copies = self.records * len(self.written)
        stored = sum(self.written.values()) + self.dead_lettered + self.lost + self.buffered
        if copies != stored:
            problems.append(
                f"records x sinks {copies} != written + dead_lettered + lost + buffered = {stored}"
            )
        return problems


@dataclass(frozen=True)
class FlushReport:
    """What happened since the previous report (of :meth:`~agentevals.ScoringEngine.flush` or
    ``shutdown``) of the same engine, and whether the engine ``completed``: became idle in time.

    Truthy only when ``completed`` and nothing was dead-lettered, lost or abandoned, so
    ``assert engine.flush()`` still reads naturally. ``written`` counts record copies stored, summed
    over the sinks; ``pending`` is what was still waiting when the report was made (queued and
    in-progress runs, buffered records).

    >>> report = FlushReport(completed=True, scored=3, written=3)
    >>> bool(report), bool(FlushReport(completed=True, dead_lettered=1))
    (True, False)
    """

    completed: bool
    scored: int = 0
    failed: int = 0
    skipped: int = 0
    written: int = 0
    dead_lettered: int = 0
    lost: int = 0
    dropped: int = 0
    abandoned: int = 0
    pending: int = 0
    published: int = 0

    def __bool__(self) -> bool:
        return self.completed and not (self.dead_lettered or self.lost or self.abandoned)


class RuleCounters:
    """Runs matched and sampled per scorer and rule, as one flat list of ints (two per rule: matched
    but not sampled, then sampled) so a submit counts a rule's verdict with one index:
    ``counts[start[id(entry)] + verdict]`` (see :meth:`RuleSet.verdict
    <agentevals._engine._sampling_rules.RuleSet.verdict>`)."""

    __slots__ = ("_names", "counts", "start")

    def __init__(self, entries: Mapping[str, ScorerEntry]) -> None:
        self.start: dict[int, int] = {}
        self._names: dict[str, tuple[int, tuple[str, ...]]] = {}
        size = 0
        for key, entry in entries.items():
            if entry.sampling.ruleset is not None:
                self.start[id(entry)] = size
                self._names[key] = (size, entry.sampling.ruleset.names)
                size += 2 * len(entry.sampling.ruleset.names)
        self.counts = [0] * size

    def snapshot(self) -> dict[str, dict[str, dict[str, int]]]:
        """``{scorer: {rule: {"matched": n, "sampled": m}}}`` (call under the engine's lock)."""
        counts = self.counts
        return {
            key: {
                name: {"matched": counts[slot] + counts[slot + 1], "sampled": counts[slot + 1]}
                for name, slot in zip(names, range(at, at + 2 * len(names), 2), strict=True)
            }
            for key, (at, names) in self._names.items()
        }


REPORTED = ("scored", "failed", "skipped", "written", "dead_lettered", "lost", "dropped", "abandoned",
            "published")  # fmt: skip


def report_since(
    completed: bool, now: Mapping[str, int], before: Mapping[str, int], pending: int
) -> FlushReport:
    """A :class:`FlushReport` of the change from the totals ``before`` to the totals ``now``."""
    return FlushReport(completed, **{k: now[k] - before.get(k, 0) for k in REPORTED}, pending=pending)


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile of already sorted values (``None`` when empty)."""
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[index]
