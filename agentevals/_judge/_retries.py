"""Judge retries logged as summaries: each attempt at DEBUG, a WARNING at most once a minute per model.

A provider that rate-limits every call would otherwise write one warning per attempt of every call.
Inside a ``ScoringEngine`` with ``redact=``, the provider's error text in these lines (which may echo the
prompt) goes through the engine's redactor first.
"""

from __future__ import annotations

import logging

from agentevals._redact import active_redactor, redact_text
from agentevals._throttle import Throttle

log = logging.getLogger("agentevals.judge")


class RetryLog:
    """Counts retried attempts per model; the first one and then one summary per ``interval`` warn."""

    def __init__(self, interval: float = 60.0) -> None:
        self.interval = interval
        self._throttle = Throttle(interval)

    def note(self, model: str, attempt: int, max_attempts: int, error_type: str, detail: str) -> None:
        detail = redact_text(active_redactor(), detail)
        log.debug("judge %s attempt %d/%d failed (%s); retrying", model, attempt, max_attempts, detail)
        _, counts = self._throttle.note(model, error_type)
        if counts is None:
            return
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
