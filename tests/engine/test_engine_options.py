"""The engine's options are typed objects: a value that cannot work is a ``ValueError`` when the object
is made, and anything but the right object in its place is a ``TypeError`` naming the class."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import length_scorer, runs

from agentevals import ScoringEngine
from agentevals.engine import BrokerOptions, DeliveryOptions, ExitOptions, QueueOptions, ScoringOptions
from agentevals.sinks import MemorySink, RetryPolicy


@pytest.mark.parametrize(
    ("kind", "fields", "message"),
    [
        (ExitOptions, {"timeout": -1}, r"ExitOptions\.timeout must be a finite number"),
        (ExitOptions, {"timeout": math.nan}, r"ExitOptions\.timeout must be a finite number"),
        (ExitOptions, {"timeout": math.inf}, r"ExitOptions\.timeout must be a finite number"),
        (ExitOptions, {"handle_sigterm": "yes"}, r"ExitOptions\.handle_sigterm must be True or False"),
        (DeliveryOptions, {"batch_size": 0}, r"DeliveryOptions\.batch_size must be a whole number"),
        (DeliveryOptions, {"batch_size": 2.5}, r"DeliveryOptions\.batch_size must be a whole number"),
        (DeliveryOptions, {"buffer": -3}, r"DeliveryOptions\.buffer must be a whole number"),
        (DeliveryOptions, {"linger": -0.1}, r"DeliveryOptions\.linger must be a finite number"),
        (QueueOptions, {"size": True}, r"QueueOptions\.size must be a whole number"),
        (QueueOptions, {"overflow": "block"}, r"QueueOptions\.overflow must be 'drop_newest' or"),
        (QueueOptions, {"linger": "0.2"}, r"QueueOptions\.linger must be a finite number"),
        (ScoringOptions, {"max_concurrency": 0}, r"ScoringOptions\.max_concurrency must be a whole number"),
        (ScoringOptions, {"timeout": "10"}, r"ScoringOptions\.timeout must be a positive"),
        (ScoringOptions, {"timeout": math.nan}, r"ScoringOptions\.timeout must be a positive"),
        (BrokerOptions, {"url": "kafka://127.0.0.1:9092"}, "unknown scheme 'kafka'.*amqp://"),
        (BrokerOptions, {"url": 5672}, "broker must be a URL"),
        (BrokerOptions, {"url": "amqp://h/", "spool_size": 0}, r"BrokerOptions\.spool_size must be"),
        (BrokerOptions, {"url": "amqp://h/", "queue": "no spaces"}, r"BrokerOptions\.queue must be a queue"),
    ],
)
def test_a_value_that_cannot_work_is_a_value_error_when_the_options_are_made(
    kind: type, fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        kind(**fields)


def test_a_retry_that_is_not_a_policy_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"DeliveryOptions\.retry must be a RetryPolicy"):
        DeliveryOptions(retry={"attempts": 3})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("keyword", "value", "message"),
    [
        ("queue", {"size": 5}, r"queue= takes a QueueOptions, e\.g\. queue=QueueOptions\(size=10_000\)"),
        ("scoring", 16, r"scoring= takes a ScoringOptions.*from agentevals\.engine import ScoringOptions"),
        ("delivery", RetryPolicy(), r"delivery= takes a DeliveryOptions.*got RetryPolicy"),
        ("exit", 30.0, r"exit= takes an ExitOptions, e\.g\. exit=ExitOptions\(timeout=30\.0\)"),
        ("queue", ScoringOptions(), r"queue= takes a QueueOptions.*got ScoringOptions"),
        ("broker", {"url": "amqp://h/"}, r"broker= takes a URL .* or a BrokerOptions"),
    ],
)
def test_anything_but_the_options_object_is_a_type_error_naming_its_class(
    keyword: str, value: object, message: str
) -> None:
    with pytest.raises(TypeError, match=message):
        ScoringEngine(length_scorer(), sinks=[MemorySink()], **{keyword: value})


def test_the_options_reach_the_engine_and_are_shown_on_it(tmp_path: Path) -> None:
    queue = QueueOptions(size=3, overflow="drop_oldest", linger=0.0)
    delivery = DeliveryOptions(batch_size=2, dead_letter=tmp_path / "dead.jsonl")
    memory = MemorySink()
    engine = ScoringEngine(
        length_scorer(),
        sinks=[memory],
        queue=queue,
        scoring=ScoringOptions(max_concurrency=1),
        delivery=delivery,
        exit=ExitOptions(timeout=5.0, handle_sigterm=False),
    )
    assert (engine.queue, engine.delivery, engine.exit.timeout, engine.broker) == (queue, delivery, 5.0, None)
    for run in runs(10):
        engine.submit(run)
    assert engine.shutdown(timeout=10)
    stats = engine.stats()
    assert stats.dropped_evicted + stats.finished == 10 and stats.finished >= 3
    assert len(memory.records) == stats.finished
