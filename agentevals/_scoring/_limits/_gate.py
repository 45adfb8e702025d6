"""``EngineLimits``: an engine's budgets and per-model breakers, consulted before each judge call.

While the engine runs a scorer it puts a scope (the gate, the scorer's key, its deadline) in
``active_limits``; the judge asks it before each call (``admit``: a ``SkipRun`` when a budget is spent
or the model's breaker is open) and reports the call's usage and outcome to the ticket it got.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from agentevals._model._errors import JudgeError, JudgeOutputError, SkipRun
from agentevals._scoring._judge import _litellm
from agentevals._scoring._judge._retries import local_cause
from agentevals._scoring._limits._breaker import Breaker, BreakerStatus, ModelBreaker
from agentevals._scoring._limits._budget import Budget, BudgetMeter, BudgetUsage, Hold

logger = logging.getLogger("agentevals.engine")

_NOTHING_HELD: AbstractAsyncContextManager[None] = nullcontext()
_WAIT_STEP = 1.0  # seconds a waiting call sleeps at most before it looks at its breaker again


def duration_text(seconds: float) -> str:
    """A wait as people read it (whole seconds).

    >>> duration_text(62505), duration_text(303), duration_text(0.4)
    ('17 h 21 min', '5 min 3 s', '0 s')
    """
    minutes, secs = divmod(max(0, round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {secs} s" if minutes else f"{secs} s"


class EngineLimits:
    """The limits of one engine's judge calls (used from the engine's event loop). ``meter`` makes the
    account of each budget: this process's own by default (workers pass one kept in Redis)."""

    def __init__(
        self,
        budgets: Sequence[Budget],
        breaker: Breaker | None,
        *,
        meter: Callable[[Budget], BudgetMeter] = BudgetMeter,
    ) -> None:
        self._meters = [meter(budget) for budget in budgets]
        self._breaker = breaker
        self._breakers: dict[str, ModelBreaker] = {}
        self._by_scorer: dict[str, list[BudgetMeter]] = {}
        self._unpriced: set[str] = set()
        self._waits = breaker is not None and breaker.on_open == "wait"
        self._scopes: dict[str, _Scope] = {}

    def scope(self, scorer_id: str, timeout: float | None) -> _Scope:
        """What to put in ``active_limits`` for a task running the scorer keyed ``scorer_id`` (within
        ``timeout`` s): its judge calls are gated. Each scorer call has a task of its own, so the value
        ends with it."""
        if timeout is None or not self._waits:  # the deadline is only read by calls that wait
            scope = self._scopes.get(scorer_id)
            if scope is None:
                scope = self._scopes[scorer_id] = _Scope(self, scorer_id, None)
            return scope
        return _Scope(self, scorer_id, asyncio.get_running_loop().time() + timeout)

    async def admit(self, model: str, scorer_id: str, deadline: float | None) -> _Ticket:
        """Let one call to ``model`` (an :func:`endpoint`) go, reserving its budgets, or raise SkipRun."""
        breaker = self._breaker_of(model)
        probe = False
        if breaker is not None:
            probe = await self._through(breaker, deadline) is None
        held: list[tuple[BudgetMeter, Hold]] = []
        for meter in self._meters_of(scorer_id):
            exhausted = meter.exhausted
            reserved = meter.reserve()
            if reserved is None:
                for other, amount in held:
                    other.release(amount)
                if breaker is not None and probe:
                    breaker.record(None, probe=True)  # the probe was never sent
                self._spent(meter, first_in_window=meter.exhausted != exhausted)
                raise SkipRun(
                    f"the judge budget {meter.budget.label} is spent; it resets in "
                    f"{duration_text(meter.resets_in())} (the run was not sent to the judge)",
                    reason="budget",
                )
            held.append((meter, reserved))
        return _Ticket(self, model, held, breaker, probe)

    async def _through(self, breaker: ModelBreaker, deadline: float | None) -> bool | None:
        """``breaker``'s verdict for one call, waiting for it to close if configured so."""
        loop = asyncio.get_running_loop()
        while True:
            verdict = breaker.admit()
            if verdict is not False:
                return verdict
            delay = breaker.retry_in()
            if breaker.config.on_open == "skip" or (deadline is not None and loop.time() + delay >= deadline):
                breaker.refused()
                raise SkipRun(
                    f"judge {breaker.model} is unavailable: its circuit breaker opened after transient "
                    f"failures; it is tried again in {duration_text(delay)} (the run was not sent to it)",
                    reason="judge_unavailable",
                )
            await asyncio.sleep(min(max(delay, 0.01), _WAIT_STEP))

    def _breaker_of(self, model: str) -> ModelBreaker | None:
        if self._breaker is None:
            return None
        breaker = self._breakers.get(model)
        if breaker is None:
            breaker = self._breakers[model] = ModelBreaker(model, self._breaker)
        return breaker

    def _meters_of(self, scorer_id: str) -> list[BudgetMeter]:
        meters = self._by_scorer.get(scorer_id)
        if meters is None:  # the scorer's own budgets first: they name the budget that ran out
            meters = [m for m in self._meters if m.budget.scorer == scorer_id]
            meters += [m for m in self._meters if m.budget.scorer is None]
            self._by_scorer[scorer_id] = meters
        return meters

    @staticmethod
    def _spent(meter: BudgetMeter, *, first_in_window: bool) -> None:
        if not first_in_window:
            return
        budget = meter.budget
        logger.warning(
            "agentevals: judge budget %s spent; runs of %s are skipped (skip_reason='budget') until it "
            "resets in %s (counted in stats().budgets)",
            budget.label,
            f"scorer {budget.scorer!r}" if budget.scorer else "every LLM-judged scorer",
            duration_text(meter.resets_in()),
        )

    def unpriced(self, model: str) -> None:
        """``model`` replied without a cost: a USD budget cannot count it (warned once per model)."""
        if model in self._unpriced:
            return
        self._unpriced.add(model)
        logger.warning(
            "agentevals: judge model %s has no price in LiteLLM's cost map, so USD budgets count its calls "
            "as $0; register its price (litellm.register_model) or use a tokens= or calls= budget",
            model,
        )

    def budgets(self) -> dict[str, BudgetUsage]:
        """Each budget's state, by label (for ``EngineStats.budgets``)."""
        return {meter.budget.label: meter.usage() for meter in self._meters}

    def breakers(self) -> dict[str, BreakerStatus]:
        """Each judge model's breaker state (for ``EngineStats.breakers``)."""
        return {model: breaker.status() for model, breaker in dict(self._breakers).items()}


class _Scope:
    """The limits the judge sees while one scorer call runs (``active_limits``); a plain class: one is
    made per scorer call."""

    __slots__ = ("deadline", "gate", "scorer_id")

    def __init__(self, gate: EngineLimits, scorer_id: str, deadline: float | None) -> None:
        self.gate, self.scorer_id, self.deadline = gate, scorer_id, deadline

    async def admit(self, model: str, api_base: str | None) -> _Ticket:
        return await self.gate.admit(endpoint(model, api_base), self.scorer_id, self.deadline)


class _Ticket:
    """One admitted judge call: collects its reported usage, then settles its budgets and breaker."""

    __slots__ = ("_breaker", "_cost", "_gate", "_held", "_model", "_priced", "_probe", "_tokens")

    def __init__(
        self,
        gate: EngineLimits,
        model: str,
        held: list[tuple[BudgetMeter, Hold]],
        breaker: ModelBreaker | None,
        probe: bool,
    ) -> None:
        self._gate, self._model, self._held, self._breaker, self._probe = gate, model, held, breaker, probe
        self._tokens = 0
        self._cost = 0.0
        self._priced = True

    def add(self, tokens: int, cost: float | None) -> None:
        self._tokens += tokens
        if cost is None:
            self._priced = False
        else:
            self._cost += cost

    def sending(self) -> AbstractAsyncContextManager[None]:
        return _NOTHING_HELD

    def close(self, error: BaseException | None) -> None:
        cancelled = isinstance(error, asyncio.CancelledError)
        for meter, hold in self._held:
            kind = meter.budget.kind
            actual = 1.0 if kind == "calls" else float(self._tokens) if kind == "tokens" else self._cost
            if cancelled:  # cut off mid-call: what it cost is unknown; count at least what it held
                actual = max(actual, hold.amount)
            meter.settle(hold, actual)
            if kind == "usd" and not self._priced:
                self._gate.unpriced(self._model)
        if self._breaker is not None:
            cause = None if error is None else error.__cause__ or error
            self._breaker.record(answered(error), self._probe, type(cause).__name__ if cause else "")


def endpoint(model: str, api_base: str | None) -> str:
    """The breaker's key: the model, and the server when the judge names one (the same model behind two
    servers fails separately), without any credentials in its address."""
    if api_base is None:
        return model
    address = urlsplit(api_base)
    host = address.hostname or ""
    if address.port is not None:
        host = f"{host}:{address.port}"
    return f"{model} at {urlunsplit((address.scheme, host, address.path, '', ''))}"


def answered(error: BaseException | None) -> bool | None:
    """Whether the model answered (``True``: success, invalid output or a permanent error), failed
    transiently after its retries (``False``), or the call tells nothing (``None``: cancelled, or the
    request failed on this side before the judge got it)."""
    if error is None or isinstance(error, JudgeOutputError):
        return True
    if isinstance(error, JudgeError) and local_cause(error) is not None:
        return None
    if isinstance(error, JudgeError):
        return not isinstance(error.__cause__, _litellm.retryable_errors())
    return None


def build_gate(
    scorer_ids: Sequence[str],
    entry_budgets: Mapping[str, Budget],
    budgets: Any,
    breaker: Any,
    *,
    meter: Callable[[Budget], BudgetMeter] = BudgetMeter,
) -> EngineLimits | None:
    """The gate for an engine's ``budgets=`` and ``breaker=`` options and its scorers' own budgets
    (``None`` when there is nothing to limit; ``meter`` as for :class:`EngineLimits`); a ``ValueError``
    says what is wrong."""
    if isinstance(budgets, Budget | Mapping):
        budgets = [budgets]
    if not isinstance(budgets, Sequence) or isinstance(budgets, str):
        raise TypeError(
            "budgets must be a list of Budget(...) or dicts, e.g. [Budget(usd=5.0, per='day')], "
            f"got {type(budgets).__name__}"
        )
    parsed = [Budget.of(budget) for budget in budgets]
    for budget in parsed:
        if budget.scorer is not None and budget.scorer not in scorer_ids:
            raise ValueError(
                f"budget {budget.label!r} names scorer {budget.scorer!r}, which the engine does not have; "
                f"its scorers are {list(scorer_ids)}"
            )
    for key, budget in entry_budgets.items():
        if budget.scorer not in (None, key):
            raise ValueError(
                f"scorer {key!r} has a budget for scorer {budget.scorer!r}; a scorer entry's budget is "
                "its own: leave Budget(scorer=...) unset there"
            )
        parsed.append(replace(budget, scorer=key))
    labels = [budget.label for budget in parsed]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise ValueError(f"budget(s) {twice} given twice; give each limit once")
    config = Breaker.of(breaker)
    if not parsed and config is None:
        return None
    return EngineLimits(parsed, config, meter=meter)
