"""``Breaker``: a circuit breaker per judge model. Judge calls that still fail after the judge's own
retries with a transient error (rate limit, 5xx, timeout, connection) open it; while open no call is
made; after ``reset_after`` seconds one probe call decides whether it closes or opens again."""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

log = logging.getLogger("agentevals.judge")

OnOpen = Literal["skip", "wait"]
State = Literal["closed", "open", "half_open"]
_KEYS = frozenset({"failures", "reset_after", "failure_rate", "window", "min_calls", "on_open", "clock"})


@dataclass(frozen=True, kw_only=True)
class Breaker:
    """When to stop calling a judge model that keeps failing, and for how long. The engine has one per
    judge model, on by default with these values; ``ScoringEngine(breaker=None)`` turns it off.

    - ``failures``: consecutive transient failures (each after the judge's own retries) that open it
      (default 5);
    - ``failure_rate`` / ``window`` / ``min_calls``: it also opens when at least ``min_calls`` calls ended
      in the last ``window`` seconds and this share of them failed (default 0.5 of at least 20 in 60 s;
      ``failure_rate=None`` turns that rule off);
    - ``reset_after``: seconds it stays open (default 30); then one probe call is let through: success
      closes it, a transient failure opens it again;
    - ``on_open``: ``"skip"`` (default): runs whose scorer needs the model get ``skipped`` records with
      ``skip_reason="judge_unavailable"``; ``"wait"``: their calls wait for it to close, up to the scorer
      timeout, and are skipped only if it does not close in time.

    Permanent errors (a refused key, a bad request) and invalid judge output do not count: the model
    answered. Nor does a request that fails before it is sent (text or a value it cannot carry, which
    LiteLLM reports as a server error): that run fails alone. One WARNING is logged when it opens and
    one when it closes again. ``clock`` is for tests.

    >>> Breaker().failures, Breaker().reset_after, Breaker().on_open
    (5, 30.0, 'skip')
    >>> Breaker.of({"failures": 3, "on_open": "wait"}).failures
    3
    """

    failures: int = 5
    reset_after: float = 30.0
    failure_rate: float | None = 0.5
    window: float = 60.0
    min_calls: int = 20
    on_open: OnOpen = "skip"
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("failures", "min_calls"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Breaker({name}=...) must be a whole number >= 1, got {value!r}")
        for name in ("reset_after", "window"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not (math.isfinite(value) and value > 0)
            ):
                raise ValueError(f"Breaker({name}=...) must be a finite number of seconds > 0, got {value!r}")
        rate = self.failure_rate
        if rate is not None and (
            isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate <= 1
        ):
            raise ValueError(f"Breaker(failure_rate=...) must be a share in (0, 1] or None, got {rate!r}")
        if self.on_open not in ("skip", "wait"):
            raise ValueError(f"Breaker(on_open=...) must be 'skip' or 'wait', got {self.on_open!r}")
        if not callable(self.clock):
            raise TypeError("Breaker(clock=...) must be a callable returning seconds, like time.monotonic")

    @classmethod
    def of(cls, value: Breaker | Mapping[str, Any] | None) -> Breaker | None:
        """Accept a ``Breaker``, a mapping of its fields, or ``None`` (no breaker)."""
        if value is None or isinstance(value, Breaker):
            return value
        if isinstance(value, Mapping):
            unknown = sorted(set(value) - _KEYS)
            if unknown:
                raise ValueError(
                    f"unknown breaker key(s) {unknown}; expected some of {sorted(_KEYS - {'clock'})}"
                )
            return cls(**dict(value))
        raise TypeError(f"breaker must be a Breaker(...), a dict of its fields or None, not {value!r}")


DEFAULT_BREAKER = Breaker()


@dataclass(frozen=True)
class BreakerStatus:
    """A model's breaker in ``EngineStats.breakers``: its ``state`` (``"closed"``, ``"open"`` or
    ``"half_open"``: a probe call is under way), how many times it ``opened`` (reopenings after a
    failed probe included), the judge calls it refused (``skipped``: each one skips its run) and the
    transient ``failures`` it counted."""

    state: State
    opened: int
    skipped: int
    failures: int


class ModelBreaker:
    """The breaker of one judge model (used from the engine's event loop only)."""

    def __init__(self, model: str, config: Breaker) -> None:
        self.model = model
        self.config = config
        self.state: State = "closed"
        self.opened = 0
        self.skipped = 0
        self.failures = 0
        self._consecutive = 0
        self._recent: deque[tuple[float, bool]] = deque()  # (ended at, failed) within the window
        self._recent_failed = 0  # how many of ``_recent`` failed (kept as they come and go, not summed)
        self._opened_at = 0.0

    def admit(self) -> bool | None:
        """``True``: call; ``None``: call as the probe (report it with ``probe=True``); ``False``: refused."""
        if self.state == "closed":
            return True
        if self.state == "open" and self.config.clock() - self._opened_at >= self.config.reset_after:
            self.state = "half_open"
            return None
        return False

    def retry_in(self) -> float:
        """Seconds until a refused call may try again (the end of the open time, or soon if probing)."""
        if self.state == "open":
            return max(0.0, self.config.reset_after - (self.config.clock() - self._opened_at))
        return 0.05 if self.state == "half_open" else 0.0

    def refused(self) -> None:
        self.skipped += 1

    def record(self, answered: bool | None, probe: bool, error: str = "") -> None:
        """A call ended: ``answered`` ``True`` (the model replied, even with a permanent error), ``False``
        (a transient failure after retries) or ``None`` (cancelled: tells nothing)."""
        if answered is False:
            self.failures += 1
        if probe:
            if answered is None:
                self.state = "open"  # no verdict: the next call probes again
                self._opened_at = self.config.clock() - self.config.reset_after
            elif answered:
                self._close()
            else:
                self._open(error, reopen=True)
            return
        if self.state != "closed" or answered is None:
            return  # calls admitted before it opened tell nothing new
        now = self.config.clock()
        self._recent.append((now, not answered))
        self._recent_failed += not answered
        while self._recent and self._recent[0][0] < now - self.config.window:
            self._recent_failed -= self._recent.popleft()[1]
        self._consecutive = 0 if answered else self._consecutive + 1
        if self._consecutive >= self.config.failures:
            self._open(f"{self._consecutive} consecutive transient failures (last: {error})")
        elif self._rate_exceeded():
            self._open(
                f"{self._recent_failed} of the last {len(self._recent)} calls within "
                f"{self.config.window:g} s failed (last: {error})"
            )

    def _rate_exceeded(self) -> bool:
        rate, calls = self.config.failure_rate, len(self._recent)
        if rate is None or calls < self.config.min_calls:
            return False
        return self._recent_failed >= rate * calls

    def _open(self, why: str, *, reopen: bool = False) -> None:
        self.state = "open"
        self.opened += 1
        self._opened_at = self.config.clock()
        self._consecutive = 0
        self._recent.clear()
        self._recent_failed = 0
        if reopen:
            log.info(
                "judge %s: the probe call failed (%s); circuit breaker open again for %g s",
                self.model,
                why,
                self.config.reset_after,
            )
            return
        action = (
            "their calls wait for it to close (up to the scorer timeout)"
            if self.config.on_open == "wait"
            else "they are skipped (skip_reason='judge_unavailable')"
        )
        log.warning(
            "judge %s: circuit breaker open after %s; no calls to it for %g s, then one probe call. Runs "
            "of scorers using it: %s. One more WARNING when it closes.",
            self.model,
            why,
            self.config.reset_after,
            action,
        )

    def _close(self) -> None:
        self.state = "closed"
        self._consecutive = 0
        self._recent.clear()
        self._recent_failed = 0
        log.warning(
            "judge %s: circuit breaker closed, the probe call succeeded; calls resume (%d judge call(s) "
            "refused while it was open, in total)",
            self.model,
            self.skipped,
        )

    def status(self) -> BreakerStatus:
        return BreakerStatus(self.state, self.opened, self.skipped, self.failures)
