"""Warnings that do not flood the log: count events per key, report a summary at most once per interval.

Used for judge retries (per model) and for live scorer failures (per scorer): a provider that
rate-limits every call, or a scorer that raises on every run, would otherwise write one line per event.
"""

from __future__ import annotations

import threading
import time
from collections import Counter


class Throttle:
    """Counts events per ``key`` and ``kind``; :meth:`note` says when one is worth a log line.

    >>> throttle = Throttle(interval=60.0)
    >>> throttle.note("scorer-a", "ValueError")
    (True, Counter({'ValueError': 1}))
    >>> throttle.note("scorer-a", "ValueError")  # counted, reported in the next summary
    (False, None)
    """

    def __init__(self, interval: float = 60.0) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._counts: dict[str, Counter[str]] = {}
        self._reported: dict[str, float] = {}
        self._seen: set[tuple[str, str]] = set()

    def note(self, key: str, kind: str) -> tuple[bool, Counter[str] | None]:
        """Count one event. Returns ``(first, summary)``: ``first`` when it is the first of this
        ``(key, kind)``; ``summary`` the counts per kind since the previous summary of ``key`` when one
        is due (the first event of a key, then at most once per ``interval``), else ``None``."""
        now = time.monotonic()
        with self._lock:
            first = (key, kind) not in self._seen
            if first:
                self._seen.add((key, kind))
            counts = self._counts.setdefault(key, Counter())
            counts[kind] += 1
            if now - self._reported.get(key, -self.interval) < self.interval:
                return first, None
            self._reported[key] = now
            del self._counts[key]
        return first, counts
