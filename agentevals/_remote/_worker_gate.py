"""What a scoring worker applies around each scorer call, as a ``ScoringEngine`` does in process: the
scorer entry's ``max_concurrency`` (per worker process), and for every judge request the call makes,
the budgets and the circuit breaker (``EngineLimits``) and the global and per-model judge caps.

The gate puts a scope in ``active_limits`` for the scorer call (``slot`` runs in the calling task), and
the judge asks that scope before each request (``admit``), then closes the ticket it got.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager

from agentevals._engine._config import ScorerEntry
from agentevals._limits._gate import EngineLimits, endpoint
from agentevals._limits._scope import Ticket, active_limits
from agentevals._redact import Redactor, set_active_redactor
from agentevals._remote._judge_gate import JudgeCaps
from agentevals._scorer import Scorer


class WorkerGate:
    """The limits of one worker process's scorer calls: ``entries`` (their ``max_concurrency`` and
    ``timeout``), ``limits`` (budgets and breakers, or ``None``), ``caps`` (the Redis judge caps, or
    ``None``) and ``redact`` (the redactor the judge's retry log lines go through)."""

    def __init__(
        self,
        entries: Mapping[str, ScorerEntry],
        *,
        scorer_timeout: float | None = None,
        limits: EngineLimits | None = None,
        caps: JudgeCaps | None = None,
        redact: Redactor | None = None,
    ) -> None:
        self.limits = limits
        self.caps = caps
        self.redact = redact
        self._timeouts = {
            key: entry.timeout if entry.timeout is not None else scorer_timeout
            for key, entry in entries.items()
        }
        self._entry_limits = {
            key: asyncio.Semaphore(entry.max_concurrency)
            for key, entry in entries.items()
            if entry.max_concurrency is not None
        }

    @asynccontextmanager
    async def slot(self, scorer: Scorer) -> AsyncIterator[None]:
        """Run the block as ``scorer``'s call: within its entry's ``max_concurrency``, its judge
        requests gated."""
        if self.redact is not None:
            set_active_redactor(self.redact)
        if self.limits is not None or self.caps is not None:
            active_limits.set(_Scope(self, scorer.id, self._timeouts.get(scorer.id)))
        limit = self._entry_limits.get(scorer.id)
        if limit is None:
            yield
        else:
            async with limit:
                yield

    def summary(self) -> str:
        """Budgets and breakers as the worker's stop line reports them."""
        if self.limits is None:
            return "no budgets, no breaker"
        budgets = {
            label: f"spent {u.spent:g}, refused {u.skipped}" for label, u in self.limits.budgets().items()
        }
        breakers = {
            model: f"{s.state}, opened {s.opened}, refused {s.skipped}"
            for model, s in self.limits.breakers().items()
        }
        return f"budgets={budgets}, breakers={breakers}"


class _Scope:
    """``active_limits`` while one scorer call runs in a worker."""

    __slots__ = ("deadline", "gate", "scorer_id")

    def __init__(self, gate: WorkerGate, scorer_id: str, timeout: float | None) -> None:
        self.gate, self.scorer_id = gate, scorer_id
        self.deadline = None if timeout is None else asyncio.get_running_loop().time() + timeout

    async def admit(self, model: str, api_base: str | None) -> Ticket:
        """Budgets and breaker first (a ``SkipRun`` when refused), then a slot in each judge cap."""
        limits, caps = self.gate.limits, self.gate.caps
        ticket = None
        if limits is not None:
            ticket = await limits.admit(endpoint(model, api_base), self.scorer_id, self.deadline)
        if caps is None:
            assert ticket is not None
            return ticket
        try:
            free = await caps.hold(model)
        except BaseException as err:
            if ticket is not None:
                ticket.close(err)
            raise
        return _CappedTicket(ticket, free)


class _CappedTicket:
    """A request holding judge-cap slots (and maybe a budgets/breaker ticket): frees them when closed."""

    __slots__ = ("_free", "_ticket")

    def __init__(self, ticket: Ticket | None, free: Callable[[], None]) -> None:
        self._ticket, self._free = ticket, free

    def add(self, tokens: int, cost: float | None) -> None:
        if self._ticket is not None:
            self._ticket.add(tokens, cost)

    def close(self, error: BaseException | None) -> None:
        self._free()
        if self._ticket is not None:
            self._ticket.close(error)
