"""What a scoring worker applies around each scorer call, as a ``ScoringEngine`` does in process: the
scorer entry's ``max_concurrency`` (per worker process), and for every judge request the call makes,
the budgets and the circuit breaker (``EngineLimits``) and the global and per-model judge caps.

The gate puts a scope in ``active_limits`` for the scorer call (``slot`` runs in the calling task); the
judge asks that scope before each request (``admit``: budgets and breaker), holds the ticket's
``sending()`` around each attempt (the caps' slots), then closes the ticket. When the Redis
that shared budgets or caps live in does not answer, the call's record is not kept: ``slot`` raises
:class:`LimitsUnavailable`, so the message is retried by the broker, as for a sink outage.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from agentevals._engine._config import ScorerEntry
from agentevals._model._errors import SkipRun
from agentevals._model._redact import Redactor, set_active_redactor
from agentevals._scoring._judge._scope import Ticket, active_limits
from agentevals._scoring._limits._gate import EngineLimits, endpoint
from agentevals._scoring._scorer import Scorer
from agentevals._worker._judge_gate import JudgeCaps


class LimitsUnavailable(Exception):
    """The Redis of the worker's shared budgets or judge caps failed during a scorer call: the message
    is retried (with the broker's backoff) instead of storing the error record that call produced."""


class WorkerGate:
    """The limits of one worker process's scorer calls: ``entries`` (their ``max_concurrency``),
    ``limits`` (budgets and breakers, or ``None``), ``caps`` (the Redis judge caps, or
    ``None``) and ``redact`` (the redactor the judge's retry log lines go through)."""

    def __init__(
        self,
        entries: Mapping[str, ScorerEntry],
        *,
        limits: EngineLimits | None = None,
        caps: JudgeCaps | None = None,
        redact: Redactor | None = None,
    ) -> None:
        self.limits = limits
        self.caps = caps
        self.redact = redact
        self._entry_limits = {
            key: asyncio.Semaphore(entry.max_concurrency)
            for key, entry in entries.items()
            if entry.max_concurrency is not None
        }

    @asynccontextmanager
    async def slot(self, scorer: Scorer, timeout: float | None) -> AsyncIterator[None]:
        """Run the block as ``scorer``'s call (cut off after ``timeout`` seconds, the deadline a judge
        waiting for a breaker keeps to): within its entry's ``max_concurrency``, its judge requests
        gated."""
        if self.redact is not None:
            set_active_redactor(self.redact)
        scope = token = None
        if self.limits is not None or self.caps is not None:
            scope = _Scope(self, scorer.id, timeout)
            token = active_limits.set(scope)
        try:
            limit = self._entry_limits.get(scorer.id)
            if limit is None:
                yield
            else:
                async with limit:
                    yield
            if scope is not None and scope.unavailable is not None:
                raise scope.unavailable
        finally:
            if token is not None:
                active_limits.reset(token)

    def summary(self) -> str:
        """Budgets and breakers as the worker's stop line reports them."""
        if self.limits is None:
            return "no budgets, no breaker"
        try:
            budgets: Any = {
                label: f"spent {u.spent:g}, refused {u.skipped}" for label, u in self.limits.budgets().items()
            }
        except Exception as err:  # a shared budget's Redis is down: the stop line still gets written
            budgets = f"unknown ({type(err).__name__}: {err})"
        breakers = {
            model: f"{s.state}, opened {s.opened}, refused {s.skipped}"
            for model, s in self.limits.breakers().items()
        }
        return f"budgets={budgets}, breakers={breakers}"


class _Scope:
    """``active_limits`` while one scorer call runs in a worker."""

    __slots__ = ("deadline", "gate", "scorer_id", "unavailable")

    def __init__(self, gate: WorkerGate, scorer_id: str, timeout: float | None) -> None:
        self.gate, self.scorer_id = gate, scorer_id
        self.deadline = None if timeout is None else asyncio.get_running_loop().time() + timeout
        self.unavailable: LimitsUnavailable | None = None

    async def admit(self, model: str, api_base: str | None) -> Ticket:
        """Budgets and breaker (a ``SkipRun`` when refused); the judge caps come with each attempt."""
        limits, caps = self.gate.limits, self.gate.caps
        ticket = None
        if limits is not None:
            try:
                ticket = await limits.admit(endpoint(model, api_base), self.scorer_id, self.deadline)
            except SkipRun:
                raise
            except Exception as err:  # only a shared budget's Redis raises here
                raise self.redis_failed(err) from err
        if caps is None:
            assert ticket is not None
            return ticket
        return _CappedTicket(self, caps, model, ticket)

    def redis_failed(self, error: Exception) -> LimitsUnavailable:
        """Note that the shared Redis failed in this call: its record is dropped, the message retried."""
        self.unavailable = LimitsUnavailable(
            f"the Redis of the worker's judge budgets and caps failed ({type(error).__name__}: {error}); "
            "the message is retried"
        )
        return self.unavailable


class _CappedTicket:
    """A judge call under the judge caps (and maybe a budgets/breaker ticket): each attempt's request
    holds a slot in every cap of its model while it is sent and answered."""

    __slots__ = ("_caps", "_model", "_scope", "_ticket")

    def __init__(self, scope: _Scope, caps: JudgeCaps, model: str, ticket: Ticket | None) -> None:
        self._scope, self._caps, self._model, self._ticket = scope, caps, model, ticket

    @asynccontextmanager
    async def sending(self) -> AsyncIterator[None]:
        try:
            free = await self._caps.hold(self._model)
        except Exception as err:
            raise self._scope.redis_failed(err) from err
        try:
            yield
        finally:
            free()

    def add(self, tokens: int, cost: float | None) -> None:
        if self._ticket is not None:
            self._ticket.add(tokens, cost)

    def close(self, error: BaseException | None) -> None:
        if self._ticket is not None:
            self._ticket.close(error)
