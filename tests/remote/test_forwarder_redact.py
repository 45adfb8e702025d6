"""``ScoringEngine(broker=..., redact=mask(...))``: every text of a run is masked in this process, before
the run is spooled or published, so neither the broker's messages nor the spool file ever hold it;
ids and the OpenTelemetry span's ids stay as they are. Real brokers; the spool is a real SQLite file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from forwarder_helpers import Broker, free_port

from agentevals import Run, ScoringEngine, create_scorer
from agentevals._engine._forward._codec import runs_from_message
from agentevals._engine._forward._run_mask import masked_run
from agentevals._engine._forward._spool import Spool
from agentevals.engine import BrokerOptions
from agentevals.redaction import EMAIL, mask

_SCORER = create_scorer(id="s").generate_score(lambda run, **_: 1.0)
_REDACT = mask([EMAIL, "Project Falcon"])
_SECRETS = (b"ann@example.com", b"bob@example.org", b"Project Falcon")
_SPAN = {"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "span_id": "00f067aa0ba902b7", "trace_flags": 1}


def _run(run_id: str) -> Run:
    """A run with a secret in each kind of text it can carry."""
    return Run.from_messages(
        [
            {"role": "system", "content": "Project Falcon support bot"},
            {"role": "user", "content": "mail ann@example.com the invoice"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "send_mail", "arguments": '{"to": "ann@example.com"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "sent to ann@example.com"},
            {"role": "assistant", "content": "Done: ann@example.com has it."},
        ],
        run_id=run_id,
        trace_id=f"trace-{run_id}",
        context=["ann@example.com is the customer"],
        error="SMTPError: bob@example.org refused",
        ground_truth="sent to ann@example.com",
        request_context={"user": "bob@example.org"},
        metadata={
            "otel": dict(_SPAN),
            "reviewer": "bob@example.org",
            "bob@example.org": 1,
            "usage": {"n": 2},
        },
    )


def _assert_masked(run: Run, run_id: str) -> None:
    assert run.run_id == run_id and run.trace_id == f"trace-{run_id}"
    assert run.metadata["otel"] == _SPAN  # ids, not text: the span still gets the evaluation events
    assert run.metadata["reviewer"] == "<redacted>" and run.metadata["<redacted>"] == 1
    assert run.metadata["usage"] == {"n": 2}
    assert run.output_text == "Done: <redacted> has it."
    assert run.context == ["<redacted> is the customer"]
    assert run.error == "SMTPError: <redacted> refused"
    assert run.ground_truth == "sent to <redacted>"
    assert run.request_context == {"user": "<redacted>"}
    assert [m.content for m in run.input.system_messages] == ["<redacted> support bot"]
    assert [m.content for m in run.input.input_messages] == ["mail <redacted> the invoice"]
    (call,) = [inv for m in run.output_messages for inv in m.tool_invocations]
    assert (call.tool_name, call.args, call.result) == (
        "send_mail",
        {"to": "<redacted>"},
        "sent to <redacted>",
    )


def test_the_published_messages_never_hold_the_masked_texts(broker: Broker, queue_name: str) -> None:
    engine = ScoringEngine([_SCORER], broker=BrokerOptions(broker.url, queue=queue_name), redact=_REDACT)
    assert engine.submit(_run("r1"))
    run = _run("r2")
    assert engine.submit_lazy(lambda: run, run_id="r2", trace_id="trace-r2")  # built on the forwarder
    assert engine.submit(Run(run_id="r3", input="nothing to hide", output="ok"))
    report = engine.flush(30)
    assert report.completed and report.published == 3

    bodies = broker.drain_bodies(queue_name)
    assert bodies and all(secret not in body for body in bodies for secret in _SECRETS)
    runs = {r.run.run_id: r.run for b in bodies for r in runs_from_message(_args(b))}
    assert sorted(runs) == ["r1", "r2", "r3"]
    _assert_masked(runs["r1"], "r1")
    _assert_masked(runs["r2"], "r2")
    assert (runs["r3"].input, runs["r3"].output) == ("nothing to hide", "ok")
    assert engine.stats().unbalanced() == []
    engine.shutdown()


def test_the_spool_holds_only_masked_runs_and_publishes_them(
    rabbitmq: Broker, queue_name: str, tmp_path: Path
) -> None:
    spool = tmp_path / "spool.db"
    down = f"amqp://guest:guest@127.0.0.1:{free_port()}/"  # nothing listens: runs stay in the spool
    engine = ScoringEngine(
        [_SCORER], broker=BrokerOptions(down, queue=queue_name, spool=spool), redact=_REDACT
    )
    for i in range(5):
        assert engine.submit(_run(f"r{i}"))
    report = engine.shutdown(1.0)
    assert report.pending == 5 and engine.stats().spooled == 5

    files = [path for path in tmp_path.iterdir() if path.name.startswith("spool.db")]
    assert files and all(secret not in path.read_bytes() for path in files for secret in _SECRETS)
    reader = Spool(spool, max_rows=100)
    try:
        rows = reader._conn.execute("SELECT payload FROM agentevals_spool ORDER BY seq").fetchall()
    finally:
        reader.close()
    assert len(rows) == 5 and all("<redacted>" in payload for (payload,) in rows)

    # The next start on the spool, with the broker back, publishes them as they were spooled: masked.
    again = ScoringEngine([_SCORER], broker=BrokerOptions(rabbitmq.url, queue=queue_name, spool=spool))
    assert again.flush(30).completed
    bodies = rabbitmq.drain_bodies(queue_name)
    assert all(secret not in body for body in bodies for secret in _SECRETS)
    runs = [r.run for b in bodies for r in runs_from_message(_args(b))]
    assert sorted(r.run_id for r in runs) == [f"r{i}" for i in range(5)]
    for run in runs:
        _assert_masked(run, run.run_id)
    again.shutdown()


def test_a_run_without_a_match_is_published_as_it_is() -> None:
    run = Run(run_id="r", input={"messages": [{"role": "user", "content": "hi"}]}, output="hello")
    assert masked_run(_REDACT, run) is run


def test_a_redactor_that_is_not_a_mask_is_a_clear_error() -> None:
    def keep(record: Any) -> Any:
        return record

    with pytest.raises(ValueError, match=r"redact= must be a mask.*agentevals worker --redact"):
        ScoringEngine([_SCORER], broker="amqp://guest:guest@127.0.0.1:5672/", redact=keep)


def _args(body: bytes) -> Any:
    import json

    (payload,) = json.loads(body)["args"]
    return payload
