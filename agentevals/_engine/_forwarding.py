"""Broker mode on the engine's side (``ScoringEngine(broker=...)``): in place of the scoring dispatch, a
relay on the engine's loop wakes the forwarder's thread when runs were queued (after ``linger``, as the
dispatch would: fewer wake-ups, bigger batches), and the forwarder takes them from the intake with the
keys of the scorers that sampled them (this stage is the forwarder's ``RunSource``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agentevals._engine._config import ScorerEntry
from agentevals._engine._forward._attach import make_forwarder
from agentevals._engine._forward._forwarder import Outgoing
from agentevals._engine._forward._options import BrokerOptions
from agentevals._engine._intake import Intake
from agentevals._model._redact import Masker


class Forwarding:
    """Hands the accepted runs to a forwarder that publishes them (a :class:`Stage`).

    ``on_progress`` is called on the forwarder's thread when runs were spooled or published.
    """

    def __init__(
        self,
        options: BrokerOptions,
        client: Any,
        entries: Mapping[str, ScorerEntry],
        loop: asyncio.AbstractEventLoop,
        *,
        intake: Intake,
        entity: str | None,
        batch_size: int,
        dead_letter: Path,
        mask: Masker | None,
        on_progress: Callable[[], None],
    ) -> None:
        self._intake = intake
        self._loop = loop
        self._keys = {id(entry): key for key, entry in entries.items()}
        self._every = tuple(entries)
        self._on_progress = on_progress
        self._relay: asyncio.Task[None] | None = None
        self.abandoned = 0  # runs the forwarder held in memory when a shutdown stopped it
        self._forwarder = make_forwarder(
            options, client, self, entity=entity, batch_size=batch_size, dead_letter=dead_letter, mask=mask
        )

    # -- what the forwarder takes (on its thread) ---------------------------------------------------

    def take(self, limit: int) -> list[Outgoing]:
        items: list[Outgoing] = []
        every, keys = self._every, self._keys
        while len(items) < limit:
            queued = self._intake.take()
            if queued is None:
                break
            run, entries, _accepted = queued
            # Entries keep the engine's order, so as many as there are scorers means every scorer.
            names = every if len(entries) == len(every) else tuple(keys[id(entry)] for entry in entries)
            items.append((run, names))
        return items

    def progressed(self) -> None:
        self._on_progress()

    # -- the engine's loop --------------------------------------------------------------------------

    def start(self) -> None:
        self._forwarder.start()
        self._relay = self._loop.create_task(self._wake_forwarder(), name="agentevals-forward")

    async def _wake_forwarder(self) -> None:
        while True:
            await self._intake.gathered()
            self._forwarder.wake()

    # -- flush and shutdown (a Stage) ---------------------------------------------------------------

    @property
    def idle(self) -> bool:
        return self._forwarder.idle

    @property
    def pending(self) -> int:
        return self._forwarder.waiting

    @property
    def parked(self) -> bool:
        return self._forwarder.parked

    def hurry(self) -> None:
        self._forwarder.hurry()

    def timed_out(self, timeout: float, *, queued: int, dead_letter: Path) -> None:
        self._forwarder.log_unpublished(timeout, queued=queued)

    def cancel(self) -> list[asyncio.Task[None]]:
        if self._relay is None:
            return []
        self._relay.cancel()
        return [self._relay]

    async def close(self, grace: float) -> None:
        """Stop the forwarder: runs held in memory are abandoned; spooled ones stay there."""
        self.abandoned += await asyncio.to_thread(self._forwarder.close, grace)

    # -- counters -----------------------------------------------------------------------------------

    def totals(self) -> dict[str, int]:
        f = self._forwarder
        # Runs the broker refused for good are in the dead-letter file too.
        return {"published": f.published, "dropped": f.dropped, "dead_lettered": f.refused,
                "abandoned": self.abandoned}  # fmt: skip

    def stats(self) -> dict[str, Any]:
        f = self._forwarder
        return {"published": f.published, "spooled": f.spooled, "recovered": f.recovered,
                "dropped_unsent": f.dropped, "forwarding": f.waiting,
                "abandoned": self.abandoned}  # fmt: skip
