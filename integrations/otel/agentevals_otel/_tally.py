"""What could not be read, counted per kind and logged once per kind."""

from __future__ import annotations

import logging
import threading

log = logging.getLogger("agentevals.otel")


class Tally:
    """Counts per kind (``"expired"``, ``"genai part blob"``...); the first of each kind is logged as a
    WARNING with its detail, the others only counted. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def note(self, kind: str, detail: str, count: int = 1, *, exc_info: bool = False) -> None:
        """Count ``count`` cases of ``kind``; log ``detail`` (with the current exception when
        ``exc_info``) if it is the first."""
        with self._lock:
            seen = kind in self._counts
            self._counts[kind] = self._counts.get(kind, 0) + count
        if not seen:
            log.warning(
                "agentevals-otel: %s (%s); further cases are only counted", detail, kind, exc_info=exc_info
            )

    def counts(self) -> dict[str, int]:
        """A copy of the counts, by kind."""
        with self._lock:
            return dict(self._counts)
