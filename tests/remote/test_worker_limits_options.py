"""A worker's limits from its options (``--budget`` texts, ``--limits``, ``--no-breaker``, ``--redact``)
and the budget account kept in Redis that the worker processes of a queue share."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from worker_helpers import redis_url  # noqa: F401  (fixture)

from agentevals import create_scorer
from agentevals._engine._config import normalize_scorers
from agentevals._scoring._limits._budget import Hold
from agentevals._scoring._limits._shared_budget import SharedBudgetMeter
from agentevals._worker._limits import engine_limits, load_redactor, parse_budget
from agentevals._worker._setup import WorkerConfig
from agentevals.engine import Breaker, Budget, ScorerEntry

#: ``--limits`` objects for these tests.
FAST_BREAKER = {"breaker": Breaker(failures=2)}
NO_BREAKER = {"breaker": None, "budgets": [{"usd": 1.0, "per": "hour"}]}
NOT_A_DICT = [Budget(calls=5, per="day")]
NOT_CALLABLE = "mask"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("text", "budget"),
    [
        ("usd=5/day", Budget(usd=5.0, per="day")),
        ("usd=0.25/minute", Budget(usd=0.25, per="minute")),
        ("tokens=200000/hour", Budget(tokens=200_000, per="hour")),
        ("calls=1000/day,scorer=faithfulness", Budget(calls=1000, per="day", scorer="faithfulness")),
    ],
)
def test_budget_texts(text: str, budget: Budget) -> None:
    assert parse_budget(text) == budget


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("usd=5", "--budget takes KIND=AMOUNT/WINDOW"),
        ("dollars=5/day", "--budget takes KIND=AMOUNT/WINDOW"),
        ("calls=10/week", "--budget takes KIND=AMOUNT/WINDOW"),
        ("calls=1.5/day", "calls= takes a whole number"),
        ("usd=1e/day", "usd= takes a number"),
        ("calls=0/day", "must be > 0"),
        ("calls=10/day,model=gpt", "only scorer=KEY may follow"),
    ],
)
def test_bad_budget_texts_say_the_form(text: str, message: str) -> None:
    with pytest.raises(ValueError, match="--budget") as caught:
        parse_budget(text)
    assert message in str(caught.value)


def _scorers() -> dict[str, Any]:
    judged = create_scorer(id="judged", judge="openai/gpt-4o-mini").generate_score(lambda run: 1.0)
    return normalize_scorers(
        {"judged": judged, "own": ScorerEntry(scorer=judged, budget={"calls": 3, "per": "hour"})}
    )


def _config(**options: Any) -> WorkerConfig:
    return WorkerConfig(broker="redis://127.0.0.1:6379/0", scorers="-", sinks=("s.db",), **options)


def test_the_breaker_is_on_by_default_and_budgets_gather_from_every_source() -> None:
    limits = engine_limits(
        _config(budgets=("calls=10/day,scorer=judged",), limits=f"{__name__}:NO_BREAKER"),
        _scorers(),
    )
    assert limits is not None
    assert sorted(limits.budgets()) == ["$1/hour", "judged: 10 calls/day", "own: 3 calls/hour"]
    assert limits._breaker is None  # the --limits object turned it off
    default = engine_limits(_config(), _scorers())
    assert default is not None and default._breaker == Breaker()
    assert engine_limits(_config(breaker=False), normalize_scorers(_scorers()["judged"].scorer)) is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"budgets": ("calls=5/day,scorer=nope",)}, "names scorer 'nope', which the engine does not have"),
        ({"budgets": ("calls=5/day", "calls=5/day")}, "given twice"),
        ({"breaker": False, "limits": f"{__name__}:FAST_BREAKER"}, "--no-breaker and a breaker in --limits"),
        ({"limits": f"{__name__}:NOT_A_DICT"}, "must name a dict with 'budgets' and/or 'breaker'"),
        ({"limits": f"{__name__}:NOWHERE"}, "has no attribute 'NOWHERE'"),
    ],
)
def test_bad_limits_say_what_to_fix(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        engine_limits(_config(**options), _scorers())
    assert message in str(caught.value)


def test_the_judge_rates_reach_the_worker_processes_intact() -> None:
    config = WorkerConfig(
        broker="redis://127.0.0.1:6379/0", scorers="m:S", sinks=("s.db",),
        model_concurrency={"openai/gpt-4o": 8}, model_rates={"openai/gpt-4o": (500, 60.0)},
    )  # fmt: skip
    assert WorkerConfig.from_env(config.to_env()) == config


def test_redact_must_name_a_redactor() -> None:
    with pytest.raises(ValueError, match="must name a redactor"):
        load_redactor(f"{__name__}:NOT_CALLABLE")
    assert load_redactor(None) is None


@pytest.fixture
def client(redis_url: str) -> Iterator[Any]:  # noqa: F811
    connection = redis.Redis.from_url(redis_url)
    yield connection
    connection.close()


@pytest.fixture
def key(client: Any) -> Iterator[str]:
    name = f"agentevals-test-budget-{uuid.uuid4().hex[:12]}"
    yield name
    for found in client.scan_iter(f"{name}*"):
        client.delete(found)


def test_two_processes_share_one_tokens_budget(client: Any, key: str) -> None:
    clock = Clock()
    budget = Budget(tokens=100, per="hour", clock=clock)
    one, two = SharedBudgetMeter(budget, client, key), SharedBudgetMeter(budget, client, key)
    first = one.reserve()
    assert first == Hold(0.0, int(clock.now // 3600))  # nothing settled yet: expected spend unknown
    one.settle(first, 40.0)
    held = two.reserve()  # the other meter sees the mean of the first's calls
    assert held is not None and held.amount == 40.0
    assert one.usage().reserved == 40.0 and one.usage().spent == 40.0
    two.settle(held, 40.0)
    assert one.reserve() is None  # 80 spent + 40 expected > 100
    assert (one.skipped, one.exhausted, two.skipped) == (1, 1, 0)
    clock.now += 3600  # the next window
    again = two.reserve()
    assert again is not None and two.usage().spent == 0.0


def test_a_reservation_given_back_or_left_by_a_dead_process(client: Any, key: str) -> None:
    clock = Clock()
    budget = Budget(calls=2, per="minute", clock=clock)
    meter = SharedBudgetMeter(budget, client, key)
    first, second = meter.reserve(), meter.reserve()
    assert first is not None and second is not None and meter.reserve() is None
    meter.release(first)  # another limit refused that call: the budget gets it back
    assert meter.reserve() is not None
    # The process holding the reservations dies; its next window starts clean.
    clock.now += 60
    fresh = SharedBudgetMeter(budget, client, key)
    assert fresh.reserve() is not None and fresh.reserve() is not None and fresh.reserve() is None
    fresh.settle(second, 1.0)  # a call reserved in the old window ends in this one: counted here
    assert fresh.usage().spent == 1.0
