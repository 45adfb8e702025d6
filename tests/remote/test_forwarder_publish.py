"""An engine with ``broker=`` publishes its accepted runs to the real brokers: the messages decode back
to the same runs, for the scorers that sampled them, and the counters balance."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from forwarder_helpers import Broker

from agentevals import Run, ScoringEngine, create_scorer
from agentevals._engine._forward._codec import ACTOR, QUEUE, runs_from_message
from agentevals.engine import BrokerOptions


def _scorer(scorer_id: str) -> Any:
    return create_scorer(id=scorer_id).generate_score(lambda run, **_: 1.0)


def _run(i: int) -> Run:
    return Run.from_messages(
        [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": f"question {i}"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"n": 1}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"result {i}"},
            {"role": "assistant", "content": f"answer {i}"},
        ],
        run_id=f"run-{i}",
        trace_id=f"trace-{i}",
        context=[f"doc {i}"],
        metadata={"span_id": f"span-{i}", "usage": {"input_tokens": i}},
        error="tool timed out" if i % 7 == 0 else None,
        duration_ms=float(i),
    )


def test_published_messages_decode_to_the_accepted_runs(broker: Broker, queue_name: str) -> None:
    scorers = {
        "always": _scorer("always"),
        "half": {"scorer": _scorer("half"), "sampling": {"type": "ratio", "rate": 0.5}},
    }
    engine = ScoringEngine(scorers, broker=BrokerOptions(broker.url, queue=queue_name), entity="support-bot")
    runs = {run.run_id: run for run in (_run(i) for i in range(40))}
    for i, run in enumerate(runs.values()):
        if i % 2:
            assert engine.submit(run)
        else:  # built later, on the forwarder's thread
            assert engine.submit_lazy(lambda run=run: run, run_id=run.run_id, trace_id=run.trace_id)
    report = engine.flush(30)
    assert report.completed and report.published == 40

    messages = broker.drain(queue_name)
    assert len(messages) < 40, "each run went in a message of its own: nothing was batched"
    decoded = {}
    for message in messages:
        assert (message["queue_name"], message["actor_name"]) == (queue_name, ACTOR)
        (payload,) = message["args"]
        for remote in runs_from_message(payload):
            decoded[remote.run.run_id] = remote
    assert len(decoded) == 40
    assert {key: d.run for key, d in decoded.items()} == runs
    assert all(d.entity == "support-bot" for d in decoded.values())
    stats = engine.stats()
    half = [key for key, d in decoded.items() if "half" in d.scorer_keys]
    assert all(d.scorer_keys[0] == "always" for d in decoded.values())
    assert len(half) == stats.sampled["half"]
    assert (stats.accepted, stats.published, stats.forwarding, stats.spooled) == (40, 40, 0, 0)
    assert stats.unbalanced() == []
    assert engine.shutdown()


def test_only_sampled_runs_are_published_and_nothing_is_scored_here(
    rabbitmq: Broker, queue_name: str
) -> None:
    calls = []
    scorer = create_scorer(id="tenth").generate_score(lambda run, **_: calls.append(run) or 1.0)
    engine = ScoringEngine(
        {"tenth": {"scorer": scorer, "sampling": {"type": "ratio", "rate": 0.1}}},
        broker=BrokerOptions(rabbitmq.url, queue=queue_name),
    )
    for i in range(200):
        engine.submit(Run(run_id=f"r{i}", input="q", output="a"))
    assert engine.shutdown(30)
    stats = engine.stats()
    assert 0 < stats.accepted < 200 and stats.sampled_out == 200 - stats.accepted
    assert len(rabbitmq.drain_runs(queue_name)) == stats.published == stats.accepted
    assert calls == [] and stats.scored == 0 and stats.written == {}
    assert stats.unbalanced() == []


def test_a_run_that_cannot_be_built_is_counted_and_the_others_go_out(
    rabbitmq: Broker, queue_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    engine = ScoringEngine([_scorer("s")], broker=BrokerOptions(rabbitmq.url, queue=queue_name))

    def broken() -> Run:
        raise KeyError("span gone")

    engine.submit(Run(run_id="good-1", output="a"))
    engine.submit_lazy(broken, run_id="bad")
    engine.submit(Run(run_id="good-2", output="b"))
    report = engine.flush(30)
    assert report.completed and report.published == 2 and report.dropped == 1
    assert sorted(r.run.run_id for r in rabbitmq.drain_runs(queue_name)) == ["good-1", "good-2"]
    stats = engine.stats()
    assert stats.dropped_unsent == 1 and stats.unbalanced() == []
    assert "run 'bad' could not be built" in caplog.text
    engine.shutdown()


def test_the_default_queue_is_the_one_the_workers_read() -> None:
    assert BrokerOptions("amqp://guest:guest@127.0.0.1:5672/").queue == QUEUE


def test_text_json_cannot_encode_as_utf8_goes_through_the_spool(
    rabbitmq: Broker, queue_name: str, tmp_path: Path
) -> None:
    odd = Run(
        run_id="odd", input="lone \ud800 surrogate", output="tab\tand \u2603", metadata={"nan": float("nan")}
    )
    engine = ScoringEngine(
        [_scorer("s")], broker=BrokerOptions(rabbitmq.url, queue=queue_name, spool=tmp_path / "s.db")
    )
    engine.submit(odd)
    report = engine.flush(30)
    assert report.completed and report.published == 1
    (remote,) = rabbitmq.drain_runs(queue_name)
    decoded = remote.run
    assert decoded.input == "lone \ud800 surrogate" and decoded.output == "tab\tand \u2603"
    assert decoded.metadata == {"nan": None}  # as the stores keep it
    engine.shutdown()
