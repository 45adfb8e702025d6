"""The spool: runs accepted by a process that is killed (SIGKILL) are published by the next process on
the same spool file, nothing lost and nothing twice; rows of a live engine are never taken; bad spool
paths are a clear error."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from forwarder_helpers import Broker, free_port

from agentevals import Run, ScoringEngine, create_scorer
from agentevals._engine._forward._spool import Spool
from agentevals.engine import BrokerOptions

_SCORER = create_scorer(id="s").generate_score(lambda run, **_: 1.0)

_AGENT = textwrap.dedent(
    """
    import sys, time
    from agentevals import Run, ScoringEngine, create_scorer
    from agentevals.engine import BrokerOptions, QueueOptions

    url, queue, spool, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    scorer = create_scorer(id="s").generate_score(lambda run, **_: 1.0)
    engine = ScoringEngine(
        [scorer], broker=BrokerOptions(url, queue=queue, spool=spool), queue=QueueOptions(linger=0.0)
    )
    for i in range(count):
        assert engine.submit(Run(run_id=f"r{i}", input="q", output=f"answer {i}"))
    while engine.stats().spooled < count:
        time.sleep(0.01)
    print("spooled", engine.stats().spooled, flush=True)
    time.sleep(600)  # killed here
    """
)


def test_a_killed_agents_spooled_runs_are_published_by_the_next_start(
    rabbitmq: Broker, queue_name: str, tmp_path: Path
) -> None:
    spool = tmp_path / "spool.db"
    down = rabbitmq.url_via(free_port())  # nothing listens: every run stays in the spool
    agent = subprocess.Popen(
        [sys.executable, "-c", _AGENT, down, queue_name, str(spool), "150"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        line = agent.stdout.readline() if agent.stdout else ""
        assert line.strip() == "spooled 150", f"the agent did not spool its runs: {line!r}"
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait(30)
    assert agent.returncode == -signal.SIGKILL

    engine = ScoringEngine([_SCORER], broker=BrokerOptions(rabbitmq.url, queue=queue_name, spool=spool))
    assert engine.stats().recovered == 150
    report = engine.flush(30)
    assert report.completed and report.published == 150
    remotes = rabbitmq.drain_runs(queue_name)
    ids = sorted(remote.run.run_id for remote in remotes)
    assert ids == sorted(f"r{i}" for i in range(150))  # nothing lost, nothing twice
    assert remotes[0].run.output_text.startswith("answer ")
    stats = engine.stats()
    assert (stats.accepted, stats.recovered, stats.published, stats.forwarding) == (0, 150, 150, 0)
    assert stats.unbalanced() == []
    assert engine.shutdown()
    with Spool(spool, max_rows=10) as left:
        assert left.adopt_orphans() == 0  # the spool is empty now


def test_a_shutdown_with_the_broker_down_leaves_the_runs_for_the_next_engine(
    rabbitmq: Broker, queue_name: str, tmp_path: Path
) -> None:
    spool = tmp_path / "spool.db"
    first = ScoringEngine(
        [_SCORER], broker=BrokerOptions(rabbitmq.url_via(free_port()), queue=queue_name, spool=spool)
    )
    for i in range(20):
        first.submit(Run(run_id=f"r{i}", output="x"))
    report = first.shutdown(1.0)
    assert not report.completed and report.pending == 20 and report.abandoned == 0

    second = ScoringEngine([_SCORER], broker=BrokerOptions(rabbitmq.url, queue=queue_name, spool=spool))
    assert second.stats().recovered == 20
    assert second.flush(30).published == 20
    assert sorted(r.run.run_id for r in rabbitmq.drain_runs(queue_name)) == sorted(f"r{i}" for i in range(20))
    assert second.shutdown()


def test_a_live_engines_rows_are_not_taken_and_a_closed_ones_are(tmp_path: Path) -> None:
    path = tmp_path / "spool.db"
    with Spool(path, max_rows=100) as live, Spool(path, max_rows=100) as other:
        assert live.add([("m1", "q", "{}"), ("m2", "q", "{}")]) == 2
        assert other.adopt_orphans() == 0  # same process, heartbeat fresh: alive
        assert [row.message_id for row in live.oldest(10)] == ["m1", "m2"]
        live.close()
        assert other.adopt_orphans() == 2
        assert other.pending == 2
        assert [row.message_id for row in other.oldest(1)] == ["m1"]
        other.remove([row.seq for row in other.oldest(10)])
        assert other.pending == 0 and other.oldest(10) == []


def test_the_spool_bound_counts_every_owner(tmp_path: Path) -> None:
    path = tmp_path / "spool.db"
    with Spool(path, max_rows=3) as one, Spool(path, max_rows=3) as two:
        assert one.add([("a", "q", "{}"), ("b", "q", "{}")]) == 2
        assert two.add([("c", "q", "{}"), ("d", "q", "{}")]) == 1
        assert (one.pending, two.pending) == (2, 1)


@pytest.mark.parametrize(
    ("where", "expected"),
    [("missing-dir/spool.db", "cannot be opened|not a writable"), ("not-a-db.txt", "not a writable SQLite")],
)
def test_a_spool_path_that_cannot_work_is_a_clear_error(tmp_path: Path, where: str, expected: str) -> None:
    (tmp_path / "not-a-db.txt").write_text("plain text, not SQLite\n" * 20)
    with pytest.raises(ValueError, match=expected):
        ScoringEngine(
            [_SCORER], broker=BrokerOptions("amqp://guest:guest@127.0.0.1:5672/", spool=tmp_path / where)
        )


def test_rows_of_an_owner_whose_heartbeat_stopped_are_adopted(tmp_path: Path) -> None:
    import sqlite3
    import time

    from agentevals._engine._forward._spool import STALE_AFTER

    path = tmp_path / "spool.db"
    with Spool(path, max_rows=10) as stuck, Spool(path, max_rows=10) as other:
        stuck.add([("m1", "q", "{}")])
        assert other.adopt_orphans() == 0  # alive: this process, fresh heartbeat
        with sqlite3.connect(path) as conn:  # its heartbeat stopped long ago (a hung process)
            conn.execute(
                "UPDATE agentevals_spool_owners SET heartbeat = ? WHERE owner = ?",
                (time.time() - STALE_AFTER - 1, stuck.owner),
            )
        assert other.adopt_orphans() == 1
        assert [row.message_id for row in other.oldest(10)] == ["m1"]
        assert stuck.oldest(10) == []
