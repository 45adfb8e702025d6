"""An engine's accounts: the counters its intake, stage and delivery keep, added up into the stats and
into the totals that flush reports compare."""

from __future__ import annotations

from agentevals._engine._delivery import Delivery
from agentevals._engine._intake import Intake
from agentevals._engine._stage import Stage
from agentevals._engine._stats import REPORTED, EngineStats
from agentevals._scoring._limits._gate import EngineLimits


class Accounts:
    """Reads the counters of an engine's parts (never writes them)."""

    def __init__(self, intake: Intake, stage: Stage, delivery: Delivery, gate: EngineLimits | None) -> None:
        self._intake = intake
        self._stage = stage
        self._delivery = delivery
        self._gate = gate

    def totals(self) -> dict[str, int]:
        """The counts a :class:`~agentevals.FlushReport` reports the change of (on the engine's loop)."""
        totals = dict.fromkeys(REPORTED, 0)
        intake = {"dropped": self._intake.dropped, "abandoned": self._intake.abandoned}
        for part in (intake, self._stage.totals(), self._delivery.totals()):
            for key, count in part.items():
                totals[key] += count
        return totals

    def pending(self) -> int:
        """Runs queued or under way, and records buffered."""
        return self._intake.queued + self._stage.pending + self._delivery.buffered

    def stats(self, *, gave_up: bool) -> EngineStats:
        """A snapshot; ``gave_up``: a shutdown stopped waiting for a loop held by a sync step, so what
        still waits will never be done (counted abandoned, or lost)."""
        intake = self._intake.stats()
        stage = self._stage.stats()
        delivery = self._delivery.stats()
        abandoned = self._intake.abandoned + stage.pop("abandoned", 0)
        dropped = intake["dropped_overflow"] + intake["dropped_evicted"] + intake["dropped_shutdown"]
        dropped += stage.get("dropped_unsent", 0)
        if gave_up:
            abandoned += intake["queued"] + stage.get("scoring", 0)
            delivery["lost"] += delivery["buffered"]
            intake["queued"] = delivery["buffered"] = 0
            if "scoring" in stage:
                stage["scoring"] = 0
        gate = self._gate
        return EngineStats(
            **intake,
            **stage,
            **delivery,
            abandoned=abandoned,
            dropped=dropped,
            budgets=gate.budgets() if gate else {},
            breakers=gate.breakers() if gate else {},
        )
