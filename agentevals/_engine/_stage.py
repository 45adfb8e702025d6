"""What an engine's lifecycle and accounts need of the part that takes the accepted runs from its intake:
the scoring dispatch (``_dispatch``) or, with ``broker=``, the forwarding to the broker
(``_forwarding``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Protocol


class Stage(Protocol):
    """Takes accepted runs from the intake and sees each one through (or counts it abandoned)."""

    @property
    def idle(self) -> bool:
        """Nothing taken from the queue is left to finish."""
        ...

    @property
    def pending(self) -> int:
        """Runs taken from the queue and not done yet (being scored, or waiting to be published)."""
        ...

    @property
    def parked(self) -> bool:
        """What is left waits in a spool for a broker that cannot be reached: a shutdown need not wait."""
        ...

    def start(self) -> None:
        """Start taking runs (on the engine's loop)."""
        ...

    def hurry(self) -> None:
        """A flush waits: do not wait for anything that can be done now."""
        ...

    def timed_out(self, timeout: float, *, queued: int, dead_letter: Path) -> None:
        """Log what a shutdown that ran out of time after ``timeout`` seconds leaves behind."""
        ...

    def cancel(self) -> list[asyncio.Task[None]]:
        """Cancel the stage's tasks (a shutdown); the tasks to wait for."""
        ...

    async def close(self, grace: float) -> None:
        """After :meth:`cancel`: release the stage's threads within ``grace`` seconds; what they still
        held is counted abandoned."""
        ...

    def totals(self) -> dict[str, int]:
        """The stage's share of the totals a :class:`~agentevals.FlushReport` compares."""
        ...

    def stats(self) -> dict[str, Any]:
        """The stage's fields of :class:`~agentevals.engine.EngineStats`."""
        ...
