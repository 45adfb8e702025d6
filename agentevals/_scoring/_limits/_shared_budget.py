"""``SharedBudgetMeter``: a budget's account kept in Redis, so every process that names the same key
counts against one budget (the scoring workers of one queue).

Each window has a hash (``spent``: settled calls, ``reserved``: calls in flight) that expires a while
after the window ends, so reservations a killed process never settled are gone with their window. A
reservation is checked and taken in one script (atomic across processes): the budget is overrun by at
most the calls in flight, as in one process. The expected spend of a call is the mean of every call
settled so far by any process (kept in a hash of its own).
"""

from __future__ import annotations

import logging
from typing import Any

from agentevals._scoring._limits._budget import _SLACK, Budget, BudgetMeter, BudgetUsage, Hold
from agentevals._support._throttle import Throttle

log = logging.getLogger("agentevals.engine")
_lost = Throttle(60.0)  # Redis failures after a call: one WARNING a minute at most per budget

#: Check the window's spent + reserved against the limit and reserve the expected spend if it fits.
#: KEYS: window hash, mean hash; ARGV: limit, slack, "1" for a calls budget, expiry (ms).
_RESERVE = """
local spent = tonumber(redis.call('HGET', KEYS[1], 'spent') or '0')
local reserved = tonumber(redis.call('HGET', KEYS[1], 'reserved') or '0')
local expected = 1
if ARGV[3] ~= '1' then
  local n = tonumber(redis.call('HGET', KEYS[2], 'n') or '0')
  if n > 0 then expected = tonumber(redis.call('HGET', KEYS[2], 'total')) / n else expected = 0 end
end
local limit = tonumber(ARGV[1])
local held = spent + reserved
if held < limit and held + expected <= limit * (1 + tonumber(ARGV[2])) then
  redis.call('HINCRBYFLOAT', KEYS[1], 'reserved', expected)
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return tostring(expected)
end
return false
"""

#: Give back a reservation (never below 0; nothing when its window's hash has expired) and, when the
#: call was made, add its spend to the window it ended in and to the mean.
#: KEYS: the reservation's window hash, the current window hash, mean hash;
#: ARGV: reserved amount, actual spend or "" (released unused), expiry (ms).
_SETTLE = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  local left = redis.call('HINCRBYFLOAT', KEYS[1], 'reserved', -tonumber(ARGV[1]))
  if tonumber(left) < 0 then redis.call('HSET', KEYS[1], 'reserved', 0) end
end
if ARGV[2] ~= '' then
  redis.call('HINCRBYFLOAT', KEYS[2], 'spent', ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  redis.call('HINCRBYFLOAT', KEYS[3], 'n', 1)
  redis.call('HINCRBYFLOAT', KEYS[3], 'total', ARGV[2])
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
return 1
"""

#: How long a window's hash outlives the window (seconds): settles of calls still in flight land.
_GRACE = 3600


class SharedBudgetMeter(BudgetMeter):
    """A :class:`BudgetMeter` whose spend and reservations live in Redis under ``key`` (``client``: a
    ``redis.Redis``); refusals and exhausted windows are counted per process, as is the log line."""

    def __init__(self, budget: Budget, client: Any, key: str) -> None:
        super().__init__(budget)
        self._client = client
        self._key = key
        self._reserve = client.register_script(_RESERVE)
        self._settle = client.register_script(_SETTLE)

    def _window_key(self, window: int) -> str:
        return f"{self._key}:w{window}"

    def _expiry_ms(self) -> int:
        return round((self.resets_in() + _GRACE) * 1000)

    def reserve(self) -> Hold | None:
        window = self.current_window()
        calls = "1" if self.budget.kind == "calls" else "0"
        keys = [self._window_key(window), f"{self._key}:mean"]
        got = self._reserve(keys=keys, args=[repr(self.budget.limit), repr(_SLACK), calls, self._expiry_ms()])
        if got is None:
            self.refused(window)
            return None
        hold = Hold(float(got), window)
        self.reserved += hold.amount
        return hold

    def release(self, hold: Hold) -> None:
        super().release(hold)
        self._script_settle(hold, "")

    def settle(self, hold: Hold, actual: float) -> None:
        super().release(hold)
        self._script_settle(hold, repr(float(actual)))

    def _script_settle(self, hold: Hold, actual: str) -> None:
        keys = [self._window_key(hold.window), self._window_key(self.current_window()), f"{self._key}:mean"]
        try:
            self._settle(keys=keys, args=[repr(hold.amount), actual, self._expiry_ms()])
        except Exception as err:  # the call is done: its reservation stays held until its window ends
            _, counts = _lost.note(self.budget.label, type(err).__name__)
            if counts is not None:
                log.warning(
                    "agentevals: judge budget %s: %d call(s) not settled in Redis (%s: %s); their "
                    "reservations count as spent until the window ends",
                    self.budget.label,
                    counts.total(),
                    type(err).__name__,
                    err,
                )

    def usage(self) -> BudgetUsage:
        """The shared window's spend and reservations (Redis is asked), with this process's counts."""
        values = self._client.hmget(self._window_key(self.current_window()), "spent", "reserved")
        spent, reserved = (float(v) if v is not None else 0.0 for v in values)
        return BudgetUsage(self.budget, spent, reserved, self.skipped, self.exhausted)
