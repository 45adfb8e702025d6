"""Which judge failures are the judge's own, and retries logged as summaries: each attempt at DEBUG, a
WARNING at most once a minute per model.

A provider that rate-limits every call would otherwise write one warning per attempt of every call.
Inside a ``ScoringEngine`` with ``redact=``, the provider's error text in these lines (which may echo the
prompt) goes through the engine's redactor first.
"""

from __future__ import annotations

import logging

from agentevals._model._redact import active_redactor, redact_text
from agentevals._support._throttle import Throttle

log = logging.getLogger("agentevals.judge")

# Raised while the request is encoded, before it leaves: text that UTF-8 cannot carry, a value JSON cannot.
_LOCAL_ERRORS = (UnicodeEncodeError, TypeError)


def local_cause(error: BaseException) -> BaseException | None:
    """The error behind ``error`` when the request failed on this side, before the judge got it (LiteLLM
    reports it as a server or connection error); ``None`` for a failure of the judge itself. Such a
    failure is not retried and does not count toward the judge's circuit breaker.

    >>> try:
    ...     "\\ud800".encode("utf-8")
    ... except UnicodeEncodeError as err:
    ...     wrapped = RuntimeError("InternalServerError")
    ...     wrapped.__cause__ = err
    >>> type(local_cause(wrapped)).__name__, local_cause(TimeoutError("slow"))
    ('UnicodeEncodeError', None)
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, _LOCAL_ERRORS):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


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
