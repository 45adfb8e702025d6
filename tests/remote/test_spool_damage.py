"""A damaged spool file never stops the engine: it is moved aside, the runs that can still be read are
published from a new spool, and one WARNING names both files and counts what was salvaged and lost."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from forwarder_helpers import Broker, free_port

from agentevals import Run, ScoringEngine, create_scorer
from agentevals._engine._forward._codec import run_entry_text
from agentevals._engine._forward._spool import Spool
from agentevals.engine import BrokerOptions

_SCORER = create_scorer(id="s").generate_score(lambda run, **_: 1.0)
_RUNS = 2000


def _spool_left_by_a_stopped_engine(path: Path, queue: str = "agentevals") -> None:
    """``_RUNS`` runs in the spool at ``path`` (their engine gone), checkpointed into the main file."""
    with Spool(path, max_rows=100_000) as spool:
        texts = [run_entry_text(Run(run_id=f"r{i}", input="q", output="a" * 500), ["s"], entity=None)
                 for i in range(_RUNS)]  # fmt: skip
        spool.add([(f"m{i}", queue, text) for i, text in enumerate(texts)])
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _garble_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64 * 1024] = b"\x5a" * (64 * 1024)
    path.write_bytes(bytes(data))


def _damage_warning(caplog: pytest.LogCaptureFixture) -> str:
    (warning,) = [r.getMessage() for r in caplog.records if "is damaged" in r.getMessage()]
    return warning


def test_a_truncated_spool_is_moved_aside_and_its_readable_runs_published(
    rabbitmq: Broker, queue_name: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spool = tmp_path / "spool.db"
    _spool_left_by_a_stopped_engine(spool, queue_name)
    _truncate(spool)
    with caplog.at_level(logging.WARNING, logger="agentevals.engine"):
        engine = ScoringEngine([_SCORER], broker=BrokerOptions(rabbitmq.url, queue=queue_name, spool=spool))
    (aside,) = tmp_path.glob("spool.db.corrupt-*")
    warning = _damage_warning(caplog)
    assert str(spool) in warning and str(aside) in warning
    salvaged = engine.stats().recovered
    assert 0 < salvaged < _RUNS
    assert f"{salvaged} run(s) salvaged" in warning
    report = engine.flush(60)
    assert report.completed and report.published == salvaged
    ids = [remote.run.run_id for remote in rabbitmq.drain_runs(queue_name)]
    assert len(ids) == len(set(ids)) == salvaged and set(ids) <= {f"r{i}" for i in range(_RUNS)}
    assert engine.shutdown()
    assert aside.stat().st_size > 0  # kept for a closer look


def test_a_garbled_spool_is_replaced_and_the_engine_starts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spool = tmp_path / "spool.db"
    _spool_left_by_a_stopped_engine(spool)
    _garble_middle(spool)
    down = f"amqp://guest:guest@127.0.0.1:{free_port()}/"
    with caplog.at_level(logging.WARNING, logger="agentevals.engine"):
        engine = ScoringEngine([_SCORER], broker=BrokerOptions(down, spool=spool))
    (aside,) = tmp_path.glob("spool.db.corrupt-*")
    warning = _damage_warning(caplog)
    assert str(spool) in warning and str(aside) in warning
    salvaged = engine.stats().recovered
    assert 0 < salvaged < _RUNS and f"{salvaged} run(s) salvaged" in warning
    engine.submit(Run(run_id="after", input="q", output="a"))
    assert not engine.flush(1).completed  # the broker is down: it waits in the new spool
    assert engine.stats().spooled == 1
    engine.shutdown(1)
    with Spool(spool, max_rows=_RUNS + 1) as reopened:
        assert reopened.adopt_orphans() == salvaged + 1  # all of them kept for the next start


def test_a_file_that_was_never_a_spool_is_left_alone(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("plain text, not SQLite\n" * 20)
    with pytest.raises(ValueError, match="not a writable SQLite"):
        ScoringEngine(
            [_SCORER], broker=BrokerOptions(f"amqp://guest:guest@127.0.0.1:{free_port()}/", spool=notes)
        )
    assert notes.read_text() == "plain text, not SQLite\n" * 20
    assert list(tmp_path.iterdir()) == [notes]
