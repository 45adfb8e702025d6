"""The broker down while the agent keeps running: runs wait (in the spool, or in memory within the
engine's queue), counters say so, one warning per outage, and once the broker is reachable again every
run arrives exactly once."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import pytest
from forwarder_helpers import Broker, TcpProxy, free_port

from agentevals import Run, ScoringEngine, create_scorer
from agentevals.engine import BrokerOptions, DeliveryOptions, QueueOptions

_SCORER = create_scorer(id="s").generate_score(lambda run, **_: 1.0)


def _wait_until(condition: Callable[[], bool], what: str, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting: {what}"
        time.sleep(0.02)


def _run_ids(broker: Broker, queue: str) -> list[str]:
    return [remote.run.run_id for remote in broker.drain_runs(queue)]


def _outage_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "cannot publish to broker" in r.getMessage()]


def test_runs_spool_while_the_broker_is_down_and_all_arrive_once_it_is_back(
    broker: Broker,
    queue_name: str,
    proxy_to: Callable[[int], TcpProxy],
    tmp_path: object,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    proxy = proxy_to(broker.port)  # not started: nothing listens on its port yet
    spool = f"{tmp_path}/spool.db"
    engine = ScoringEngine(
        [_SCORER], broker=BrokerOptions(broker.url_via(proxy.port), queue=queue_name, spool=spool)
    )
    for i in range(60):
        assert engine.submit(Run(run_id=f"r{i}", output=str(i)))
    _wait_until(lambda: engine.stats().spooled == 60, "60 runs spooled")
    down = engine.flush(0.5)  # tries again now; still down
    assert not down.completed and down.pending == 60 and down.published == 0
    stats = engine.stats()
    assert (stats.accepted, stats.spooled, stats.published, stats.forwarding) == (60, 60, 0, 60)
    assert stats.unbalanced() == []
    assert len(_outage_warnings(caplog)) == 1  # one warning for the outage, not one per run or retry
    assert "broker" in caplog.text and ":guest@" not in caplog.text  # the password is not logged

    proxy.start()
    for i in range(60, 80):  # runs keep coming while it recovers
        engine.submit(Run(run_id=f"r{i}", output=str(i)))
    up = engine.flush(30)
    assert up.completed and up.published == 80
    ids = _run_ids(broker, queue_name)
    assert sorted(ids) == sorted(f"r{i}" for i in range(80))  # every run, exactly once
    stats = engine.stats()
    assert (stats.published, stats.forwarding, stats.dropped) == (80, 0, 0)
    assert stats.unbalanced() == []
    assert len(_outage_warnings(caplog)) == 1
    assert "reachable again" in caplog.text
    assert engine.shutdown()


def test_without_a_spool_runs_wait_in_the_bounded_queue_and_overflow_is_counted(
    rabbitmq: Broker, queue_name: str, proxy_to: Callable[[int], TcpProxy]
) -> None:
    proxy = proxy_to(rabbitmq.port)
    engine = ScoringEngine(
        [_SCORER],
        queue=QueueOptions(size=20),
        delivery=DeliveryOptions(batch_size=5),
        broker=BrokerOptions(rabbitmq.url_via(proxy.port), queue=queue_name),
    )
    accepted = [f"r{i}" for i in range(60) if engine.submit(Run(run_id=f"r{i}", output="x"))]
    down = engine.flush(0.5)
    stats = engine.stats()
    assert not down.completed
    # At most one batch held by the forwarder plus a full queue wait; the rest was refused and counted.
    assert stats.queued + stats.forwarding == len(accepted) <= 25
    assert stats.dropped_overflow == 60 - len(accepted) > 0
    assert stats.unbalanced() == []

    proxy.start()
    assert engine.flush(30).completed
    assert sorted(_run_ids(rabbitmq, queue_name)) == sorted(accepted)
    assert engine.stats().published == len(accepted)
    assert engine.shutdown()


def test_a_full_spool_counts_the_overflow_as_dropped(
    rabbitmq: Broker, queue_name: str, tmp_path: object
) -> None:
    dead = rabbitmq.url_via(free_port())
    engine = ScoringEngine(
        [_SCORER], broker=BrokerOptions(dead, queue=queue_name, spool=f"{tmp_path}/spool.db", spool_size=10)
    )
    for i in range(15):
        engine.submit(Run(run_id=f"r{i}", output="x"))
    _wait_until(lambda: engine.stats().spooled + engine.stats().dropped_unsent == 15, "15 runs taken")
    stats = engine.stats()
    assert (stats.accepted, stats.spooled, stats.dropped_unsent, stats.forwarding) == (15, 10, 5, 10)
    assert stats.dropped == 5 and stats.unbalanced() == []
    report = engine.shutdown(0.5)
    assert not report.completed and report.pending == 10 and report.abandoned == 0  # left in the spool


def test_without_a_spool_a_shutdown_that_runs_out_of_time_abandons_and_counts(
    rabbitmq: Broker, queue_name: str
) -> None:
    engine = ScoringEngine([_SCORER], broker=BrokerOptions(rabbitmq.url_via(free_port()), queue=queue_name))
    for i in range(30):
        engine.submit(Run(run_id=f"r{i}", output="x"))
    report = engine.shutdown(0.5)
    assert not report.completed and not report and report.abandoned == 30 and report.published == 0
    stats = engine.stats()
    assert (stats.abandoned, stats.queued, stats.forwarding) == (30, 0, 0)
    assert stats.unbalanced() == []


def test_without_a_spool_batch_after_batch_goes_out(rabbitmq: Broker, queue_name: str) -> None:
    # Many more runs than one batch: each batch sent is followed by the next, with no idle wait between
    # (a flush would run out of its time otherwise).
    engine = ScoringEngine(
        [_SCORER],
        delivery=DeliveryOptions(batch_size=2),
        broker=BrokerOptions(rabbitmq.url, queue=queue_name),
    )
    for i in range(60):
        engine.submit(Run(run_id=f"r{i}", output="x"))
    report = engine.flush(30)
    assert report.completed and report.published == 60
    assert len(_run_ids(rabbitmq, queue_name)) == 60
    assert engine.shutdown()
