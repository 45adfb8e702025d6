"""Runs over the 1 MB batch bound travel alone and packed (compressed): through the real RabbitMQ and
Redis to an ``agentevals worker`` that scores them; a packed message is read back as the same runs."""

from __future__ import annotations

import secrets
import sqlite3
from pathlib import Path

import pytest
from worker_helpers import (  # noqa: F401  (fixtures)
    SCORERS,
    broker_url,
    queue,
    score_rows,
    start_worker,
    stop,
    wait_until,
)

from agentevals import Run, ScoringEngine
from agentevals._engine._forward._codec import (
    PACK_OVER,
    batch_text,
    packed_text,
    run_entry_text,
    runs_from_message,
)
from agentevals.engine import BrokerOptions


def _large_output() -> str:
    """About 3 MB of upper-case text that compresses only to about half (hex): its message stays over
    1 MB."""
    return secrets.token_hex(1_500_000).upper()


def test_a_run_over_one_megabyte_reaches_a_worker_and_is_scored(
    broker_url: str,  # noqa: F811
    queue: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    db = tmp_path / "scores.db"
    worker = start_worker(broker_url, queue, db)
    engine = ScoringEngine({"shout": SCORERS["shout"]}, broker=BrokerOptions(broker_url, queue=queue))
    large = _large_output()
    try:
        engine.submit(Run(run_id="small-before", input="q", output="a"))
        engine.submit(Run(run_id="large", input="q", output=large))
        engine.submit(Run(run_id="small-after", input="q", output="bb"))
        report = engine.flush(60)
        assert report, report
        assert (report.published, report.dead_lettered) == (3, 0)
        wait_until(lambda: len(score_rows(db)) == 3)
    finally:
        engine.shutdown()
        output = stop(worker)
    assert set(score_rows(db)) == {
        ("small-before", "shout", "scored"),
        ("large", "shout", "scored"),
        ("small-after", "shout", "scored"),
    }, output
    with sqlite3.connect(db) as conn:
        scores = dict(conn.execute("SELECT run_id, score FROM agentevals_scores").fetchall())
    assert scores == {"small-before": 0.0, "large": 1.0, "small-after": 0.0}


def test_a_packed_message_holds_the_same_runs() -> None:
    runs = [Run(run_id=f"r{i}", input="q", output="x" * 600_000) for i in range(2)]
    text = batch_text([run_entry_text(run, ["length"], entity="bot") for run in runs])
    assert len(text) > PACK_OVER
    packed = packed_text(text)
    assert len(packed) < len(text) // 100
    decoded = runs_from_message(packed)
    assert [(r.run.run_id, r.run.output_text, r.scorer_keys, r.entity) for r in decoded] == [
        (run.run_id, run.output_text, ("length",), "bot") for run in runs
    ]


@pytest.mark.parametrize(
    ("zlib", "error"),
    [("not base64!", "cannot be unpacked"), ("eA==", "cannot be unpacked"), (3, "must be base64 text")],
)
def test_a_damaged_packed_message_is_a_clear_error(zlib: object, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        runs_from_message({"v": 2, "zlib": zlib})
