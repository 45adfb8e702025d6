"""Caps on the judge requests under way at once across every worker process and machine (counters on a
shared Redis, one key for all judges and one per model), and per-model request rates (``N`` requests per
window, as providers' per-minute quotas are). Each request holds its cap slots while it is sent and
answered (not while it waits for the judge's own ``max_concurrency`` or between retries), so a scorer
making three requests at once holds three; each request, retries included, spends one of its model's
rate."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Mapping
from typing import Any

from agentevals._support._throttle import Throttle

logger = logging.getLogger("agentevals.worker")
_lost = Throttle(60.0)  # Redis failures after a request: one WARNING a minute at most

#: Expiry of a cap's Redis key (ms), renewed by each acquire and release: the slots a killed worker held
#: are freed when the cap has been unused that long (a live worker releases its own).
SLOT_TTL_MS = 120_000
#: Seconds between two tries for a slot when all are taken (jittered, so waiters do not align).
POLL = 0.02

#: Take a slot in every cap (KEYS, their limits in ARGV after the expiry) or in none: one round trip.
_TAKE = """
for i, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') >= tonumber(ARGV[i + 1]) then return 0 end
end
for _, key in ipairs(KEYS) do
  redis.call('INCR', key)
  redis.call('PEXPIRE', key, ARGV[1])
end
return 1
"""
#: The generic cell rate algorithm on the Redis server's clock (shared by every machine): KEYS[1] keeps the
#: time (ms) the model's next request is due if requests came evenly; ARGV[1] is the spacing between two
#: requests (window / N, ms) and ARGV[2] how far ahead of that schedule a burst may run (window - spacing,
#: so N at once). Returns 0 (go: the request is counted) or the ms to wait before asking again.
_PACE = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + tonumber(clock[2]) / 1000
local due = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
local early = due - now - tonumber(ARGV[2])
if early > 0 then return math.ceil(early) end
local after = due + tonumber(ARGV[1])
redis.call('SET', KEYS[1], string.format('%.3f', after), 'PX', math.ceil(after - now) + 1000)
return 0
"""
#: Give the slots back (never below 0; ARGV[1]: the expiry).
_FREE = """
for _, key in ipairs(KEYS) do
  if tonumber(redis.call('DECR', key)) < 0 then redis.call('SET', key, 0) end
  redis.call('PEXPIRE', key, ARGV[1])
end
return 1
"""


class JudgeCaps:
    """At most ``limit`` judge requests at once in total (``None``: no global cap), at most
    ``per_model[model]`` at once per judge model, and at most ``rates[model] = (n, seconds)`` requests
    to a model in any ``seconds``.

    ``client`` is a ``redis.Redis``: every worker that shares its server and ``prefix`` shares the
    caps and rates. A process never holds more than a cap's limit, so its requests first queue for a
    local semaphore of that size: only those that could get a slot ask Redis (and poll it while other
    workers hold the rest). A request over its model's rate waits as long as Redis says, then asks
    again; it takes its cap slots only once the rate lets it go.
    """

    def __init__(
        self,
        client: Any,
        limit: int | None,
        per_model: Mapping[str, int] | None = None,
        prefix: str = "",
        rates: Mapping[str, tuple[int, float]] | None = None,
    ) -> None:
        self._take = client.register_script(_TAKE)
        self._free = client.register_script(_FREE)
        self._pace = client.register_script(_PACE)
        caps = {"*": limit} if limit is not None else {}
        caps.update(per_model or {})
        self._keys = {name: f"agentevals-judge{prefix}:{name}" for name in caps}
        self._limits = caps
        # Per model: its Redis key, the ms between two requests, and the ms a burst may run ahead.
        self._rates = {
            model: (f"agentevals-judge-rate{prefix}:{model}", 1000 * window / n, 1000 * window * (n - 1) / n)
            for model, (n, window) in (rates or {}).items()
        }
        self._local: dict[str, asyncio.Semaphore] = {}
        self._of_model: dict[str, tuple[list[str], list[int], list[str]]] = {}

    def _caps(self, model: str) -> tuple[list[str], list[int], list[str]]:
        """The names, limits and Redis keys of the caps a request to ``model`` is under."""
        found = self._of_model.get(model)
        if found is None:
            # The model's cap first: a request waiting for it holds no place in the global one.
            names = [name for name in (model, "*") if name in self._limits]
            found = (names, [self._limits[n] for n in names], [self._keys[n] for n in names])
            self._of_model[model] = found
        return found

    async def hold(self, model: str) -> Callable[[], None]:
        """Wait for ``model``'s rate, then for a slot in every cap of ``model``; returns what frees the
        slots (call it once)."""
        rate = self._rates.get(model)
        if rate is not None:
            key, spacing, burst = rate
            while wait := self._pace(keys=[key], args=[spacing, burst]):
                await asyncio.sleep(int(wait) / 1000 * (1 + 0.1 * random.random()))
        names, limits, keys = self._caps(model)
        if not names:
            return _nothing
        held: list[asyncio.Semaphore] = []
        try:
            for name, limit in zip(names, limits, strict=True):
                local = self._local.get(name)
                if local is None:
                    local = self._local[name] = asyncio.Semaphore(limit)
                await local.acquire()
                held.append(local)
            # One Redis round trip (sub-millisecond on a local network) on the loop: cheaper than a thread.
            while not self._take(keys=keys, args=[SLOT_TTL_MS, *limits]):
                await asyncio.sleep(POLL * (0.5 + random.random()))
        except BaseException:
            for local in held:
                local.release()
            raise
        return lambda: self._give_back(keys, held)

    def _give_back(self, keys: list[str], held: list[asyncio.Semaphore]) -> None:
        try:
            self._free(keys=keys, args=[SLOT_TTL_MS])
        except Exception as err:  # the request is done: its slots free themselves when the keys expire
            _, counts = _lost.note("judge caps", type(err).__name__)
            if counts is not None:
                logger.warning(
                    "agentevals: %d judge request(s) could not give their cap slots back to Redis (%s: %s); "
                    "the slots free themselves when the cap is unused for %d s",
                    counts.total(),
                    type(err).__name__,
                    err,
                    SLOT_TTL_MS // 1000,
                )
        finally:
            for local in held:
                local.release()  # after Redis: the next local waiter finds the slot free


def _nothing() -> None:
    """What frees no slot (a model under no cap)."""
