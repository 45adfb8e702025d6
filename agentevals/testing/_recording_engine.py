"""An engine for an integration's capture tests: it keeps every run it is handed instead of scoring it."""

from __future__ import annotations

import threading
from collections.abc import Callable

from agentevals._engine._stats import EngineStats, FlushReport
from agentevals._model._run import Run


class RecordingEngine:
    """An ``agentevals.live.Engine`` that keeps every submitted run in :attr:`runs` (a lazy run is built
    at once, on the caller's thread) and counts :attr:`flushes` and :attr:`shutdowns`; thread-safe.

    Give it to an integration as ``engine=`` to test what the integration captures, without scorers.

    >>> from agentevals.live import LiveScoring
    >>> engine = RecordingEngine()
    >>> scoring = LiveScoring(engine=engine)
    >>> scoring.submit_lazy(lambda: Run(input="hi", output="hello"), run_id="r1")
    True
    >>> [run.output_text for run in engine.runs], bool(scoring.flush()), engine.flushes
    (['hello'], True, 1)
    """

    def __init__(self) -> None:
        self.runs: list[Run] = []
        self.flushes = 0
        self.shutdowns = 0
        self._lock = threading.Lock()

    def submit(self, run: Run) -> bool:
        with self._lock:
            self.runs.append(run)
        return True

    def submit_lazy(self, build: Callable[[], Run], *, run_id: str, trace_id: str | None = None) -> bool:
        return self.submit(build())

    def flush(self, timeout: float = 30.0) -> FlushReport:
        with self._lock:
            self.flushes += 1
        return FlushReport(completed=True)

    async def aflush(self, timeout: float = 30.0) -> FlushReport:
        return self.flush(timeout)

    def shutdown(self, timeout: float = 30.0) -> FlushReport:
        with self._lock:
            self.shutdowns += 1
        return FlushReport(completed=True)

    def stats(self) -> EngineStats:
        with self._lock:
            count = len(self.runs)
        return EngineStats(submitted=count, accepted=count)
