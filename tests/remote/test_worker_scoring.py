"""The scoring worker in this process (Dramatiq's ``Worker`` on the real RabbitMQ and Redis): records
and runs stored before the ack, redelivery adds no row, a poison run, an unknown scorer, an unreadable
message and a sink outage."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from worker_helpers import (  # noqa: F401  (fixtures)
    SCORERS,
    broker_url,
    make_runs,
    publish,
    publish_runs,
    queue,
    run_ids,
    score_rows,
    wait_until,
)

from agentevals._engine._config import normalize_scorers
from agentevals._engine._forward._codec import batch_text, run_entry_text
from agentevals._model._result import ScoreRecord
from agentevals._worker._actor import WorkerApp
from agentevals._worker._setup import WorkerConfig
from agentevals.sinks import SQLiteSink


class _Started:
    """A WorkerApp with a running in-process worker; stopped (gracefully) by :meth:`stop`."""

    def __init__(self, app: WorkerApp, threads: int) -> None:
        self.app = app
        self.worker = app.worker(threads)
        self.worker.start()

    def stop(self) -> None:
        self.worker.stop()
        self.app.broker.close()


@pytest.fixture
def start(broker_url: str, queue: str, tmp_path: Path) -> Iterator[Any]:  # noqa: F811
    started: list[_Started] = []

    def start(sinks: Sequence[Any] | None = None, threads: int = 4, **options: Any) -> _Started:
        config = WorkerConfig(
            broker=broker_url,
            scorers="worker_helpers:SCORERS",
            sinks=(str(tmp_path / "scores.db"),),
            queue=queue,
            min_backoff_ms=20,
            max_backoff_ms=200,
            **options,
        )
        app = WorkerApp(config, normalize_scorers(SCORERS), sinks=sinks)
        started.append(_Started(app, threads))
        return started[-1]

    yield start
    for worker in started:
        worker.stop()


def test_runs_are_scored_and_stored_with_their_runs(
    start: Any,
    broker_url: str,  # noqa: F811
    queue: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    db = tmp_path / "scores.db"
    worker = start()
    runs = make_runs(50)
    publish_runs(broker_url, queue, runs, ["length", "shout"], entity="support-bot")
    wait_until(lambda: len(score_rows(db)) == 100)
    worker.stop()
    rows = score_rows(db)
    assert sorted(rows) == sorted((run.run_id, key, "scored") for run in runs for key in ("length", "shout"))
    assert sorted(run_ids(db)) == sorted(run.run_id for run in runs)
    assert worker.app.scorer.counts["messages"] == 50


def test_a_redelivered_message_or_batch_adds_no_row(
    start: Any,
    broker_url: str,  # noqa: F811
    queue: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    db = tmp_path / "scores.db"
    worker = start()
    runs = make_runs(10)
    payloads: list[Any] = [batch_text([run_entry_text(run, ["length"], entity="bot")]) for run in runs]
    batches = [
        batch_text([run_entry_text(run, ["length"], entity="bot") for run in runs[i : i + 4]]) for i in (0, 3)
    ]
    publish(broker_url, queue, payloads + payloads + payloads[:3] + batches + batches)  # all at least twice
    wait_until(lambda: worker.app.scorer.counts["messages"] == 27, what="27 messages")
    worker.stop()
    assert worker.app.scorer.counts["runs"] == 23 + 16
    rows = score_rows(db)
    assert len(rows) == 10
    assert sorted(r[0] for r in rows) == sorted(run.run_id for run in runs)
    assert sorted(run_ids(db)) == sorted(run.run_id for run in runs)


def test_a_poison_run_is_an_error_record_and_the_queue_moves_on(
    start: Any,
    broker_url: str,  # noqa: F811
    queue: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    db = tmp_path / "scores.db"
    worker = start(threads=1)  # one thread: a blocked message would block every other one
    poisoned, healthy = make_runs(1, "poisoned"), make_runs(20, "healthy")
    publish_runs(broker_url, queue, poisoned, ["poison", "length"])
    publish_runs(broker_url, queue, healthy, ["length"])
    wait_until(lambda: len(score_rows(db)) == 22)
    worker.stop()
    rows = set(score_rows(db))
    assert (poisoned[0].run_id, "poison", "failed") in rows
    assert (poisoned[0].run_id, "length", "scored") in rows
    assert {(run.run_id, "length", "scored") for run in healthy} <= rows
    assert worker.app.lifecycle.dead_lettered == 0  # acked at once, not retried


def test_an_unknown_scorer_is_an_error_record_and_a_bad_message_is_dead_lettered(
    start: Any,
    broker_url: str,  # noqa: F811
    queue: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    db = tmp_path / "scores.db"
    worker = start()
    (run,) = make_runs(1)
    single = {"v": 1, **json.loads(run_entry_text(run, ["length"], entity="bot"))}  # not a batch
    publish(broker_url, queue, [single, {"hello": "world"}])
    publish_runs(broker_url, queue, [run], ["no_such_scorer", "length"])
    wait_until(lambda: len(score_rows(db)) == 2 and worker.app.lifecycle.dead_lettered == 2)
    worker.stop()
    assert set(score_rows(db)) == {(run.run_id, "no_such_scorer", "failed"), (run.run_id, "length", "scored")}
    assert worker.app.scorer.counts["bad_messages"] == 2


class _FlakySink:
    """A real SQLite sink whose first ``failures`` writes fail as an unreachable database would."""

    def __init__(self, path: Path, failures: int) -> None:
        self.sink = SQLiteSink(path)
        self.failures = failures
        self.attempts = 0

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        self.attempts += 1
        if self.attempts <= self.failures:
            raise ConnectionError("database unreachable (simulated outage)")
        await self.sink.write(records)

    async def close(self) -> None:
        await self.sink.close()


def test_a_sink_outage_is_retried_until_the_records_are_stored(
    start: Any,
    broker_url: str,  # noqa: F811
    queue: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    db = tmp_path / "scores.db"
    sink = _FlakySink(db, failures=3)
    worker = start(sinks=[sink], threads=1)
    runs = make_runs(5)
    publish_runs(broker_url, queue, runs, ["length"])
    wait_until(lambda: len(score_rows(db)) == 5)
    worker.stop()
    assert sorted(r[0] for r in score_rows(db)) == sorted(run.run_id for run in runs)
    assert sink.attempts > 3
    assert worker.app.lifecycle.dead_lettered == 0


def test_a_sink_that_stays_down_dead_letters_after_max_retries(
    start: Any,
    broker_url: str,  # noqa: F811
    queue: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    sink = _FlakySink(tmp_path / "scores.db", failures=10**6)
    worker = start(sinks=[sink], threads=1, max_retries=2)
    publish_runs(broker_url, queue, make_runs(1), ["length"])
    wait_until(lambda: worker.app.lifecycle.dead_lettered == 1, what="the dead-lettering")
    worker.stop()
    assert sink.attempts == 3  # the first try and two retries
