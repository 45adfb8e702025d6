"""A message the broker refuses for good never blocks the runs behind it: the refused run is isolated
(the batch split), written to the engine's dead-letter file and counted in ``dropped_unsent`` with one
warning naming the reason; every other run is published once."""

from __future__ import annotations

import json
import logging
import secrets
from pathlib import Path
from typing import Any

import pytest
from forwarder_helpers import Broker

from agentevals import Run, ScoringEngine, create_scorer
from agentevals._engine._forward import _attach, _broker, _forwarder
from agentevals.engine import BrokerOptions, DeliveryOptions

_SCORER = create_scorer(id="s").generate_score(lambda run, **_: 1.0)


def _small_message_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Limits the test can reach: ~300 bytes a small run; a huge one (hex) stays large compressed."""
    monkeypatch.setattr(_forwarder, "MAX_MESSAGE_BYTES", 4_000)
    monkeypatch.setattr(_forwarder, "MAX_PACKED_BYTES", 4_000)


def _refusal_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "refuses it for good" in r.getMessage()]


@pytest.mark.parametrize("spooled", [False, True], ids=["memory", "spool"])
def test_a_run_over_the_message_size_limit_is_dead_lettered_and_the_rest_published(
    broker: Broker,
    queue_name: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    spooled: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _small_message_limits(monkeypatch)
    dead = tmp_path / "dead.jsonl"
    engine = ScoringEngine(
        [_SCORER],
        delivery=DeliveryOptions(dead_letter=dead),
        broker=BrokerOptions(broker.url, queue=queue_name, spool=tmp_path / "spool.db" if spooled else None),
    )
    small = [f"r{i}" for i in range(40)]
    with caplog.at_level(logging.WARNING, logger="agentevals.engine"):
        for i, run_id in enumerate(small):
            engine.submit(Run(run_id=run_id, input="q", output="a"))
            if i == 20:
                engine.submit(Run(run_id="huge", input="q", output=secrets.token_hex(10_000)))
        report = engine.flush(30)
    assert report.completed
    assert not report and report.dead_lettered == 1  # the refused run makes the report falsy
    published = broker.drain_runs(queue_name)
    assert [remote.run.run_id for remote in published] == small  # in order, each once, none blocked
    stats = engine.stats()
    assert (stats.accepted, stats.published, stats.dropped_unsent, stats.forwarding) == (41, 40, 1, 0)
    assert stats.unbalanced() == []
    (line,) = dead.read_text(encoding="utf-8").splitlines()
    entry = json.loads(line)
    assert entry["run_entry"]["run"]["run_id"] == "huge" and entry["run_entry"]["scorers"] == ["s"]
    assert entry["error"].startswith("MessageTooLarge:") and entry["queue"] == queue_name
    (warning,) = _refusal_warnings(caplog)
    assert "MessageTooLarge" in warning and str(dead.resolve()) in warning
    assert engine.shutdown()


class _RefusingBroker:
    """The real broker, except that it refuses (as RabbitMQ refuses a message over its
    ``max_message_size``: the channel closed with 406) every message holding the marker."""

    def __init__(self, real: Any, marker: str) -> None:
        self.real, self.marker, self.refused = real, marker, 0

    def enqueue(self, message: Any) -> Any:
        import pika.exceptions
        from dramatiq.errors import ConnectionClosed

        if self.marker in message.args[0]:
            self.refused += 1
            raise ConnectionClosed(
                pika.exceptions.ChannelClosedByBroker(406, "PRECONDITION_FAILED - message too large")
            )
        return self.real.enqueue(message)

    def close(self) -> None:
        self.real.close()


def test_a_batch_the_broker_refuses_is_split_until_the_refused_run_is_alone(
    rabbitmq: Broker,
    queue_name: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[_RefusingBroker] = []

    def refusing_broker(url: str) -> _RefusingBroker:
        made.append(_RefusingBroker(_broker.make_broker(url), marker="refuse-me"))
        return made[-1]

    monkeypatch.setattr(_attach, "make_broker", refusing_broker)
    dead = tmp_path / "dead.jsonl"
    engine = ScoringEngine(
        [_SCORER],
        delivery=DeliveryOptions(dead_letter=dead),
        broker=BrokerOptions(rabbitmq.url, queue=queue_name, spool=tmp_path / "s.db"),
    )
    (refusing,) = made
    runs = [Run(run_id=f"r{i}", input="q", output="refuse-me" if i == 37 else "a") for i in range(64)]
    with caplog.at_level(logging.WARNING, logger="agentevals.engine"):
        for run in runs:
            engine.submit(run)
        report = engine.flush(60)
    assert report.completed
    expected = [run.run_id for run in runs if run.run_id != "r37"]
    assert [remote.run.run_id for remote in rabbitmq.drain_runs(queue_name)] == expected
    stats = engine.stats()
    assert (stats.published, stats.dropped_unsent, stats.forwarding) == (63, 1, 0)
    assert stats.unbalanced() == []
    # A few attempts of the whole batch (a refusal may pass), then one per halving down to the run.
    assert 3 <= refusing.refused <= 3 + 7
    (line,) = dead.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["run_entry"]["run"]["run_id"] == "r37"
    (warning,) = _refusal_warnings(caplog)
    assert "PRECONDITION_FAILED" in warning
    assert engine.shutdown()


def test_an_outage_is_retried_not_dead_lettered(rabbitmq: Broker, queue_name: str, tmp_path: Path) -> None:
    """Connection errors stay transient: nothing is dead-lettered while the broker is unreachable."""
    dead = tmp_path / "dead.jsonl"
    engine = ScoringEngine(
        [_SCORER],
        delivery=DeliveryOptions(dead_letter=dead),
        broker=BrokerOptions(rabbitmq.url_via(1), queue=queue_name, spool=tmp_path / "s.db"),
    )
    for i in range(10):
        engine.submit(Run(run_id=f"r{i}", input="q", output="a"))
    assert not engine.flush(2).completed
    stats = engine.stats()
    assert (stats.dropped_unsent, stats.forwarding) == (0, 10)
    assert not dead.exists()
    engine.shutdown(1)


def test_replay_with_a_broker_publishes_the_refused_runs(
    broker: Broker,
    queue_name: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentevals.cli import main

    _small_message_limits(monkeypatch)
    dead = tmp_path / "dead.jsonl"
    engine = ScoringEngine(
        [_SCORER],
        delivery=DeliveryOptions(dead_letter=dead),
        broker=BrokerOptions(broker.url, queue=queue_name),
    )
    large = secrets.token_hex(10_000)
    engine.submit(Run(run_id="huge", input="q", output=large))
    assert engine.flush(30).dead_lettered == 1
    engine.shutdown()

    # The cause fixed (here: the default limits), the run goes to the queue it was refused on.
    assert main(["replay", str(dead), "--broker", broker.url]) == 0
    assert "published 1 runs" in capsys.readouterr().out
    (remote,) = broker.drain_runs(queue_name)
    assert (remote.run.run_id, remote.run.output_text, remote.scorer_keys) == ("huge", large, ("s",))
    assert not dead.exists()


def test_replay_keeps_the_runs_when_the_broker_is_down(
    rabbitmq: Broker, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # replay's default --db, agentevals.db, is made here
    from agentevals._engine._forward._codec import run_entry_text
    from agentevals._engine._forward._refusal import dead_letter_run
    from agentevals.cli import main

    dead = tmp_path / "dead.jsonl"
    entry = run_entry_text(Run(run_id="r1", input="q", output="a"), ["s"], entity=None)
    dead_letter_run(dead, broker="amqp://h/", queue="agentevals", entry_text=entry, reason="refused")
    assert main(["replay", str(dead), "--broker", rabbitmq.url_via(1)]) == 1
    assert "1 run(s) kept" in capsys.readouterr().err
    assert len(dead.read_text(encoding="utf-8").splitlines()) == 1
