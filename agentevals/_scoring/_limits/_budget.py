"""``Budget``: a ceiling on judge spend (USD, tokens or calls) per minute, hour or day, and the meter
that enforces it by reserving before each judge call and settling with the reported usage after."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Window = Literal["minute", "hour", "day"]
Kind = Literal["usd", "tokens", "calls"]
WINDOW_SECONDS: dict[str, int] = {"minute": 60, "hour": 3600, "day": 86_400}
_KINDS: tuple[Kind, ...] = ("usd", "tokens", "calls")
_KEYS = frozenset({*_KINDS, "per", "scorer", "clock"})
_SLACK = 1e-9  # relative: float sums of prices must not refuse the call that exactly fills the budget


@dataclass(frozen=True, kw_only=True)
class Budget:
    """A limit on judge spend per window, for the whole engine or one scorer (``scorer=`` its key).

    Exactly one of ``usd`` (LiteLLM's cost of the calls, what the provider bills), ``tokens`` (prompt +
    completion tokens) or ``calls`` (judge calls; a call's retries are part of it), and ``per``: one of
    ``"minute"``, ``"hour"``, ``"day"``. Windows are fixed and aligned on ``clock`` (UTC days with the
    default ``time.time``); ``clock`` is there for tests.

    Once spent, the affected scorers' runs get ``skipped`` records (``skip_reason="budget"``) until the
    window ends. Each judge call reserves its expected spend first (1 call, or the mean of the calls
    settled so far) and settles with its reported usage after, so the budget is overrun by at most the
    calls already in flight.

    >>> Budget(usd=5.0, per="day").label
    '$5/day'
    >>> Budget.of({"calls": 1000, "per": "hour", "scorer": "relevancy"}).label
    'relevancy: 1000 calls/hour'
    """

    usd: float | None = None
    tokens: int | None = None
    calls: int | None = None
    per: Window | None = None
    scorer: str | None = None
    clock: Callable[[], float] = field(default=time.time, repr=False, compare=False)

    def __post_init__(self) -> None:
        given = [kind for kind in _KINDS if getattr(self, kind) is not None]
        if len(given) != 1:
            raise ValueError(
                "a Budget limits exactly one of usd=, tokens= or calls=, e.g. Budget(usd=5.0, per='day'); "
                f"got {', '.join(given) or 'none'}"
            )
        value = getattr(self, given[0])
        if given[0] == "usd":
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"Budget(usd=...) must be a number of US dollars > 0, got {value!r}")
        elif isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"Budget({given[0]}=...) must be a whole number > 0, got {value!r}")
        if not value > 0:
            raise ValueError(f"Budget({given[0]}=...) must be > 0, got {value!r}")
        if self.per not in WINDOW_SECONDS:
            raise ValueError(
                "Budget(per=...) must be 'minute', 'hour' or 'day' (the window it resets on), "
                f"got {self.per!r}"
            )
        if self.scorer is not None and (not isinstance(self.scorer, str) or not self.scorer):
            raise ValueError(
                f"Budget(scorer=...) must be a scorer key (a non-empty string) or None, got {self.scorer!r}"
            )
        if not callable(self.clock):
            raise TypeError("Budget(clock=...) must be a callable returning seconds, like time.time")

    @classmethod
    def of(cls, value: Budget | Mapping[str, Any]) -> Budget:
        """Accept a ``Budget`` or a mapping of its fields (``{"calls": 50, "per": "hour"}``)."""
        if isinstance(value, Budget):
            return value
        if isinstance(value, Mapping):
            unknown = sorted(set(value) - _KEYS)
            if unknown:
                raise ValueError(
                    f"unknown budget key(s) {unknown}; expected some of {sorted(_KEYS - {'clock'})}"
                )
            return cls(**dict(value))
        raise TypeError(
            f"a budget is a Budget(...) or a dict such as {{'usd': 5.0, 'per': 'day'}}, not {value!r}"
        )

    @property
    def kind(self) -> Kind:
        return next(kind for kind in _KINDS if getattr(self, kind) is not None)

    @property
    def limit(self) -> float:
        return float(getattr(self, self.kind))

    @property
    def seconds(self) -> int:
        assert self.per is not None
        return WINDOW_SECONDS[self.per]

    @property
    def label(self) -> str:
        """How stats and log lines name it, e.g. ``'relevancy: 1000 calls/hour'``."""
        amount = f"${self.limit:g}" if self.kind == "usd" else f"{getattr(self, self.kind)} {self.kind}"
        return f"{self.scorer + ': ' if self.scorer else ''}{amount}/{self.per}"


@dataclass(frozen=True)
class BudgetUsage:
    """A budget's state in ``EngineStats.budgets``: ``spent`` in the current window (settled calls),
    ``reserved`` by calls in flight, ``skipped``: judge calls refused since the engine started (each
    one skips its run), ``exhausted``: windows in which it ran out."""

    budget: Budget
    spent: float
    reserved: float
    skipped: int
    exhausted: int


@dataclass(frozen=True, slots=True)
class Hold:
    """What one judge call reserved of a budget: the ``amount``, in the ``window`` it was reserved in."""

    amount: float
    window: int


def fits(limit: float, held: float, expected: float) -> bool:
    """Whether a call expected to spend ``expected`` may go when ``held`` is spent or reserved."""
    return held < limit and held + expected <= limit * (1 + _SLACK)


class BudgetMeter:
    """The running account of one budget in this process (used from the engine's event loop only)."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.window = -1
        self.spent = 0.0
        self.reserved = 0.0
        self.skipped = 0
        self.exhausted = 0
        self._exhausted_in = -1
        self._settled = 0
        self._settled_total = 0.0

    def current_window(self) -> int:
        """The number of the budget's window now (windows of ``per`` seconds since the clock's epoch)."""
        return int(self.budget.clock() // self.budget.seconds)

    def _roll(self) -> None:
        window = self.current_window()
        if window != self.window:  # calls in flight keep their reservation into the new window
            self.window = window
            self.spent = 0.0

    def estimate(self) -> float:
        """What the next call is expected to spend: 1 call, or the mean of the calls settled so far."""
        if self.budget.kind == "calls":
            return 1.0
        return self._settled_total / self._settled if self._settled else 0.0

    def reserve(self) -> Hold | None:
        """Hold the next call's expected spend; ``None`` (and counted) when the budget is spent."""
        self._roll()
        limit, held, expected = self.budget.limit, self.spent + self.reserved, self.estimate()
        if fits(limit, held, expected):
            self.reserved += expected
            return Hold(expected, self.window)
        self.refused(self.window)
        return None

    def refused(self, window: int) -> None:
        """Count a call refused in ``window``, and the window when it is the first refusal there."""
        self.skipped += 1
        if self._exhausted_in != window:
            self._exhausted_in = window
            self.exhausted += 1

    def release(self, hold: Hold) -> None:
        """A reservation given back unused (another limit refused the call)."""
        self.reserved = max(0.0, self.reserved - hold.amount)

    def settle(self, hold: Hold, actual: float) -> None:
        """The call ended: its reservation becomes its ``actual`` spend, in the window it ended in."""
        self.release(hold)
        self._roll()
        self.spent += actual
        self.settled(actual)

    def settled(self, actual: float) -> None:
        """Note a settled call's spend for :meth:`estimate`."""
        self._settled += 1
        self._settled_total += actual

    def resets_in(self) -> float:
        """Seconds until the current window ends."""
        seconds = self.budget.seconds
        return seconds - self.budget.clock() % seconds

    def usage(self) -> BudgetUsage:
        """A snapshot (read from any thread: changes nothing)."""
        current = self.current_window() == self.window
        spent = self.spent if current else 0.0
        return BudgetUsage(self.budget, spent, self.reserved, self.skipped, self.exhausted)
