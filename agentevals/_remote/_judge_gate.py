"""A cap on the judge requests under way at once across every worker process and machine: counters on
a shared Redis (Dramatiq's rate-limiter backend), one key for all judges and one per model. Each judge
request (with its retries) holds its slots, so a scorer making three requests at once holds three."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Mapping
from typing import Any

#: Expiry of a cap's Redis key (ms), renewed by each acquire and release: the slots a killed worker held
#: are freed when the cap has been unused that long (a live worker releases its own).
SLOT_TTL_MS = 120_000
#: Seconds between two tries for a slot when all are taken (jittered, so waiters do not align).
POLL = 0.02


class JudgeCaps:
    """At most ``limit`` judge requests at once in total (``None``: no global cap) and at most
    ``per_model[model]`` at once per judge model.

    ``backend`` is a Dramatiq rate-limiter backend (``RedisBackend``): every worker that shares it and
    ``prefix`` shares the caps.
    """

    def __init__(
        self, backend: Any, limit: int | None, per_model: Mapping[str, int] | None = None, prefix: str = ""
    ) -> None:
        self._backend = backend
        self._prefix = f"agentevals-judge{prefix}"
        self._all = (f"{self._prefix}:*", limit) if limit is not None else None
        self._models = {model: (f"{self._prefix}:{model}", n) for model, n in (per_model or {}).items()}

    def caps(self, model: str) -> list[tuple[str, int]]:
        """The (key, limit) of each cap a request to ``model`` is under."""
        caps = [self._all] if self._all is not None else []
        if model in self._models:
            caps.append(self._models[model])
        return caps

    async def hold(self, model: str) -> Callable[[], None]:
        """Wait for a slot in every cap of ``model``; returns what frees them (call it once)."""
        taken: list[str] = []
        try:
            for key, limit in self.caps(model):
                while not self._take(key, limit):
                    await asyncio.sleep(POLL * (0.5 + random.random()))
                taken.append(key)
        except BaseException:
            self._free(taken)
            raise
        return lambda: self._free(taken)

    def _take(self, key: str, limit: int) -> bool:
        # One Redis round trip (sub-millisecond on a local network) on the loop: cheaper than a thread.
        if self._backend.add(key, 1, ttl=SLOT_TTL_MS):
            return True
        return bool(self._backend.incr(key, 1, maximum=limit, ttl=SLOT_TTL_MS))

    def _free(self, keys: list[str]) -> None:
        for key in keys:
            self._backend.decr(key, 1, minimum=0, ttl=SLOT_TTL_MS)
