"""``MemorySink``: keeps records in a list (tests, notebooks)."""

from __future__ import annotations

from collections.abc import Sequence

from agentevals._model._result import ScoreRecord


class MemorySink:
    """Collects every record in ``.records``.

    >>> import asyncio
    >>> from agentevals import ScoreResult
    >>> sink = MemorySink()
    >>> asyncio.run(sink.write([ScoreResult(scorer_id="s", scorer_name="s", run_id="r", score=1.0)]))
    >>> len(sink.records)
    1
    """

    name = "memory"

    def __init__(self) -> None:
        self.records: list[ScoreRecord] = []

    def check(self) -> None:
        """Nothing to verify: this sink has no driver, connection or path (``check()`` is there so that
        every sink can be checked the same way)."""

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        self.records.extend(records)

    async def close(self) -> None:
        return None
