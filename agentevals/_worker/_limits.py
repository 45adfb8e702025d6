"""A worker's limits from its options: ``--budget`` specs, a ``--limits module:ATTR`` object, the
breaker (on unless ``--no-breaker``), the judge caps and ``--redact``; built into the worker's gate.

Budgets live in Redis when the worker has one (a ``redis://`` broker or ``--rate-limit-backend``), so
every worker process of the queue counts against the same budget; otherwise each process has its own.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentevals._engine._config import ScorerEntry
from agentevals._model._redact import Redactor
from agentevals._scoring._limits._breaker import DEFAULT_BREAKER
from agentevals._scoring._limits._budget import Budget, BudgetMeter
from agentevals._scoring._limits._gate import EngineLimits, build_gate
from agentevals._worker._gate import WorkerGate
from agentevals._worker._setup import WorkerConfig, import_attribute

_BUDGET = re.compile(r"(?P<kind>usd|tokens|calls)=(?P<amount>[0-9.eE+-]+)/(?P<per>minute|hour|day)")
BUDGET_FORM = "KIND=AMOUNT/WINDOW[,scorer=KEY] (e.g. usd=5/day, calls=1000/hour,scorer=faithfulness)"


def parse_budget(spec: str) -> Budget:
    """A ``Budget`` from ``--budget``'s text, e.g. ``usd=5/day`` or ``calls=1000/hour,scorer=relevancy``.

    >>> parse_budget("calls=1000/hour,scorer=relevancy").label
    'relevancy: 1000 calls/hour'
    """
    head, *rest = spec.strip().split(",")
    found = _BUDGET.fullmatch(head.strip())
    if found is None:
        raise ValueError(f"--budget takes {BUDGET_FORM}; got {spec!r}")
    kind, amount = found["kind"], found["amount"]
    try:
        value: float | int = float(amount) if kind == "usd" else int(amount)
    except ValueError:
        whole = "a number" if kind == "usd" else "a whole number"
        raise ValueError(f"--budget {spec!r}: {kind}= takes {whole}, got {amount!r}") from None
    options: dict[str, Any] = {kind: value, "per": found["per"]}
    for part in rest:
        name, _, key = part.strip().partition("=")
        if name != "scorer" or not key:
            raise ValueError(f"--budget {spec!r}: after the amount only scorer=KEY may follow, got {part!r}")
        options["scorer"] = key
    try:
        return Budget(**options)
    except ValueError as err:
        raise ValueError(f"--budget {spec!r}: {err}") from None


def load_limits(spec: str) -> tuple[list[Any], Any]:
    """The budgets and breaker ``--limits module:ATTR`` names: a mapping with ``"budgets"`` (a list of
    ``Budget`` or dicts) and/or ``"breaker"`` (a ``Breaker``, a dict of its fields, or ``None``: off),
    as ``ScoringEngine(budgets=..., breaker=...)`` takes them. The breaker is ``DEFAULT_BREAKER`` when
    the mapping does not name one."""
    value = import_attribute(spec, "--limits")
    if not isinstance(value, Mapping) or not value or set(value) - {"budgets", "breaker"}:
        raise ValueError(
            f"--limits {spec} must name a dict with 'budgets' and/or 'breaker', e.g. "
            "{'budgets': [Budget(usd=5.0, per='day')], 'breaker': Breaker(failures=3)}; "
            f"got {type(value).__name__} {list(value) if isinstance(value, Mapping) else ''}".rstrip()
        )
    budgets = value.get("budgets", [])
    if isinstance(budgets, Budget | Mapping):
        budgets = [budgets]
    if not isinstance(budgets, Sequence) or isinstance(budgets, str):
        raise ValueError(f"--limits {spec}: 'budgets' must be a list of Budget(...) or dicts")
    return list(budgets), value.get("breaker", DEFAULT_BREAKER)


def engine_limits(
    config: WorkerConfig, entries: Mapping[str, ScorerEntry], redis_client: Any = None
) -> EngineLimits | None:
    """The budgets and breaker of a worker process (``None``: neither); a ``ValueError`` says what is
    wrong. With a ``redis_client`` (a ``redis.Redis``), budgets are kept there, keyed by queue and
    budget, and shared by every worker of the queue; without one, each process counts its own."""
    budgets: list[Any] = [parse_budget(spec) for spec in config.budgets]
    breaker: Any = DEFAULT_BREAKER if config.breaker else None
    if config.limits is not None:
        more, named = load_limits(config.limits)
        budgets += more
        if not config.breaker and named is not None and named is not DEFAULT_BREAKER:
            raise ValueError(f"--no-breaker and a breaker in --limits {config.limits}: give one of them")
        if config.breaker:
            breaker = named
    entry_budgets = {key: e.budget for key, e in entries.items() if e.budget is not None}
    meter: Callable[[Budget], BudgetMeter] = BudgetMeter
    if redis_client is not None:
        from agentevals._scoring._limits._shared_budget import SharedBudgetMeter

        def meter(budget: Budget) -> BudgetMeter:
            return SharedBudgetMeter(budget, redis_client, f"agentevals-budget:{config.queue}:{budget.label}")

    try:
        return build_gate(list(entries), entry_budgets, budgets, breaker, meter=meter)
    except TypeError as err:
        raise ValueError(str(err)) from None


def load_redactor(spec: str | None) -> Redactor | None:
    """The redactor ``--redact module:ATTR`` names (a ``Masker`` from ``agentevals.redaction.mask`` or
    any ``(record) -> record`` callable)."""
    if spec is None:
        return None
    redact = import_attribute(spec, "--redact")
    if not callable(redact):
        raise ValueError(
            f"--redact {spec} must name a redactor (record) -> record, e.g. REDACT = mask([EMAIL]) from "
            f"agentevals.redaction; got {type(redact).__name__}"
        )
    return redact  # type: ignore[no-any-return]


def worker_gate(
    config: WorkerConfig, entries: Mapping[str, ScorerEntry], redact: Redactor | None = None
) -> WorkerGate:
    """The gate of one worker process: budgets, breaker, judge caps and rates, entries' ``max_concurrency``
    (``redact``: the redactor the judge's retry log lines go through)."""
    client = None
    if config.rate_limit_backend is not None:
        import redis

        client = redis.Redis.from_url(config.rate_limit_backend)
    caps = None
    if client is not None and (
        config.judge_concurrency is not None or config.model_concurrency or config.model_rates
    ):
        from agentevals._worker._judge_gate import JudgeCaps

        # Keyed by queue: the workers of one queue share the caps (a test's own queue has its own).
        caps = JudgeCaps(
            client,
            config.judge_concurrency,
            config.model_concurrency,
            prefix=f":{config.queue}",
            rates=config.model_rates,
        )
    return WorkerGate(
        entries,
        limits=engine_limits(config, entries, client),
        caps=caps,
        redact=redact,
    )
