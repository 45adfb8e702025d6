"""A cap on the judged scorer calls running at once across every worker process and machine:
Dramatiq's ``ConcurrentRateLimiter`` on a shared Redis, one key for all judges and one per model."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from agentevals._scorer import Scorer

#: Expiry of a cap's Redis key (ms), renewed by each acquire and release: the slots a killed worker held
#: are freed when the cap has been unused that long (a live worker releases its own).
SLOT_TTL_MS = 120_000
#: Seconds between two tries for a slot when all are taken (jittered, so waiters do not align).
POLL = 0.02


class JudgeGate:
    """Slots for judged scorer calls: at most ``limit`` at once in total (``None``: no global cap) and
    at most ``per_model[model]`` at once per judge model. A scorer without a judge passes freely; a
    judged scorer holds its slots for its whole call (its judge steps run inside them).

    ``backend`` is a Dramatiq rate-limiter backend (``RedisBackend``): every worker that shares it
    shares the caps.
    """

    def __init__(
        self, backend: Any, limit: int | None, per_model: Mapping[str, int] | None = None, prefix: str = ""
    ) -> None:
        from dramatiq.rate_limits import ConcurrentRateLimiter

        def limiter(key: str, n: int) -> Any:
            key = f"agentevals-judge{prefix}:{key}"
            return ConcurrentRateLimiter(backend, key, limit=n, ttl=SLOT_TTL_MS)  # type: ignore[no-untyped-call]

        self._all = limiter("*", limit) if limit is not None else None
        self._models = {model: limiter(model, n) for model, n in (per_model or {}).items()}

    @asynccontextmanager
    async def slot(self, scorer: Scorer) -> AsyncIterator[None]:
        """Hold the slots ``scorer``'s call needs while the block runs."""
        limiters = []
        if scorer.has_judge:
            limiters = [self._all] if self._all is not None else []
            limiters += [self._models[m] for m in _models(scorer) if m in self._models]
        async with AsyncExitStack() as stack:
            for limiter in limiters:
                await stack.enter_async_context(_held(limiter))
            yield


@asynccontextmanager
async def _held(limiter: Any) -> AsyncIterator[None]:
    while True:
        # One Redis round trip (sub-millisecond on a local network) on the loop: cheaper than a thread.
        with limiter.acquire(raise_on_failure=False) as acquired:
            if acquired:
                yield
                return
        await asyncio.sleep(POLL * (0.5 + random.random()))


def _models(scorer: Scorer) -> set[str]:
    """The models of the judges ``scorer``'s prompt steps use (a step's own judge, else the scorer's)."""
    judges = [s.prompt.judge or scorer.judge for s in scorer._ordered if s.prompt is not None]
    return {judge.model for judge in judges if judge is not None}
