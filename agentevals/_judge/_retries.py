"""Judge retries logged as summaries: each attempt at DEBUG, a WARNING at most once a minute per model.

A provider that rate-limits every call would otherwise write one warning per attempt of every call.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter

log = logging.getLogger("agentevals.judge")


class RetryLog:
    """Counts retried attempts per model; the first one and then one summary per ``interval`` warn."""

    def __init__(self, interval: float = 60.0) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._counts: dict[str, Counter[str]] = {}
        self._reported: dict[str, float] = {}

    def note(self, model: str, attempt: int, max_attempts: int, error_type: str, detail: str) -> None:
        log.debug("judge %s attempt %d/%d failed (%s); retrying", model, attempt, max_attempts, detail)
        now = time.monotonic()
        with self._lock:
            counts = self._counts.setdefault(model, Counter())
            counts[error_type] += 1
            if now - self._reported.get(model, -self.interval) < self.interval:
                return
            self._reported[model] = now
            del self._counts[model]
        kinds = ", ".join(f"{kind} ×{n}" for kind, n in counts.most_common())
        log.warning(
            "judge %s: %d failed attempt(s) retried (%s) since the last report; last: %s. "
            "Next report in %.0f s at most; every attempt is logged at DEBUG.",
            model,
            counts.total(),
            kinds,
            detail,
            self.interval,
        )


RETRIES = RetryLog()
