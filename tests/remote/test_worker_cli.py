"""``agentevals worker`` as users run it, in a subprocess: usage errors, SIGTERM, and ``kill -9`` in the
middle of 1,000 runs (after a restart every (run, scorer) record exists exactly once)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from worker_helpers import (  # noqa: F401  (fixtures)
    HERE,
    REPO,
    broker_url,
    delete_queue,
    kill_9,
    make_runs,
    publish_runs,
    rabbitmq_url,
    run_ids,
    score_rows,
    start_worker,
    stop,
    wait_until,
)


def _worker_command(*args: str) -> subprocess.CompletedProcess[str]:
    env_path = str(HERE)
    return subprocess.run(
        [sys.executable, "-m", "agentevals.cli", "worker", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--broker", "http://127.0.0.1:5672/"], "is not a broker URL"),
        (["--broker", "amqp://guest:s3cret@127.0.0.1:1/"], "cannot reach the broker at amqp://guest:***@"),
        (["--scorers", "no_such_module:SCORERS"], "cannot import 'no_such_module'"),
        (["--scorers", "worker_helpers:NOPE"], "has no attribute 'NOPE'"),
        (["--scorers", "worker_helpers"], "--scorers takes module:attribute"),
        (["--threads", "0"], "--threads must be a whole number >= 1"),
        (["--judge-concurrency", "4"], "need a Redis every worker shares"),
        (["--model-concurrency", "gpt"], "--model-concurrency takes MODEL=N"),
        (["--model-rate", "gpt=500"], "--model-rate takes MODEL=N/WINDOW"),
        (["--model-rate", "gpt=500/week"], "WINDOW one of second, minute, hour, day"),
        (["--model-rate", "gpt=500/minute"], "need a Redis every worker shares"),
        (["--budget", "calls=10/week"], "--budget takes KIND=AMOUNT/WINDOW[,scorer=KEY]"),
        (["--budget", "usd=5/day,scorer=nope"], "names scorer 'nope', which the engine does not have"),
        (["--limits", "worker_helpers:SCORERS"], "must name a dict with 'budgets' and/or 'breaker'"),
        (
            ["--redact", "worker_helpers:RABBITMQ_URL"],
            "--redact worker_helpers:RABBITMQ_URL must name a redactor",
        ),
    ],
)
def test_usage_errors_exit_2_saying_what_to_fix(
    args: list[str],
    message: str,
    rabbitmq_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    defaults = {
        "--broker": rabbitmq_url,
        "--scorers": "worker_helpers:SCORERS",
        "--sink": str(tmp_path / "s.db"),
    }
    given = dict(zip(args[::2], args[1::2], strict=True))
    command = [part for flag, value in {**defaults, **given}.items() for part in (flag, value)]
    done = _worker_command(*command)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert "s3cret" not in done.stderr


def test_help_says_what_is_shared_and_what_is_per_process() -> None:
    done = _worker_command("--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "Shared by all workers of the queue when they have Redis" in text
    assert "otherwise each worker process counts its own" in text
    assert "max_concurrency holds per worker process" in text
    assert "on by default, per worker process" in text
    assert "judge requests under way at once, across all workers" in text


def test_budgets_without_redis_are_said_to_be_per_process(rabbitmq_url: str, tmp_path: Path) -> None:  # noqa: F811
    queue = f"agentevals-test-{os.getpid()}-budget-note"
    db = tmp_path / "s.db"
    worker = start_worker(rabbitmq_url, queue, db, "--budget", "calls=5/day", processes=2)
    try:
        publish_runs(rabbitmq_url, queue, make_runs(1), ["length"])
        wait_until(lambda: len(score_rows(db)) == 1, what="the worker's first record")
    finally:
        output = stop(worker)
        delete_queue(rabbitmq_url, queue)
    assert "budgets are counted per worker process (no Redis): 2 processes" in " ".join(output.split())


def _rows_per_pair(db: Path) -> Counter[tuple[str, str]]:
    return Counter((run_id, scorer) for run_id, scorer, _ in score_rows(db))


def test_sigterm_finishes_or_returns_every_message(rabbitmq_url: str, tmp_path: Path) -> None:  # noqa: F811
    db, queue = tmp_path / "scores.db", f"agentevals-test-term-{tmp_path.name}"
    runs = make_runs(300)
    publish_runs(rabbitmq_url, queue, runs, ["slow", "length"])
    worker = start_worker(rabbitmq_url, queue, db, threads=8)
    try:
        wait_until(lambda: len(score_rows(db)) >= 100, what="the first records")
        output = stop(worker)  # SIGTERM: stops taking messages, finishes those under way
        assert worker.returncode == 0, output
        assert "Traceback" not in output
        stored = _rows_per_pair(db)
        assert all(n == 1 for n in stored.values())
        assert all(n == 2 for n in Counter(run_id for run_id, _ in stored).values())  # whole runs only
        worker = start_worker(rabbitmq_url, queue, db, threads=8)
        wait_until(lambda: len(score_rows(db)) == 600)
    finally:
        stop(worker)
        delete_queue(rabbitmq_url, queue)
    assert _rows_per_pair(db) == Counter({(run.run_id, s): 1 for run in runs for s in ("slow", "length")})
    assert sorted(run_ids(db)) == sorted(run.run_id for run in runs)


def test_kill_9_in_the_middle_of_1000_runs_loses_and_duplicates_nothing(
    broker_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    """RabbitMQ redelivers a dead worker's messages when its connection drops; Redis once its heartbeat
    is older than --heartbeat-timeout (2 s here; runs take 10 ms, so a live worker never lapses)."""
    db, queue = tmp_path / "scores.db", f"agentevals-test-kill-{tmp_path.name}"
    extra = ["--heartbeat-timeout", "2"] if broker_url.startswith("redis") else []
    runs = make_runs(1000)
    publish_runs(broker_url, queue, runs, ["slow", "length"], per_message=8)  # batches, as agents send
    worker = start_worker(broker_url, queue, db, *extra, processes=2, threads=8)
    try:
        wait_until(lambda: len(score_rows(db)) >= 100, what="the first records")
        kill_9(worker)  # the worker processes die with messages under way and unacked
        killed_at = len(score_rows(db))
        assert killed_at < 2000, "the worker finished before it was killed: nothing was tested"
        worker = start_worker(broker_url, queue, db, *extra, processes=2, threads=8)
        wait_until(lambda: len(score_rows(db)) == 2000, timeout=120)
    finally:
        stop(worker)
        delete_queue(broker_url, queue)
    assert _rows_per_pair(db) == Counter({(run.run_id, s): 1 for run in runs for s in ("slow", "length")})
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT COUNT(*), COUNT(DISTINCT run_id) FROM agentevals_runs").fetchone() == (
            1000,
            1000,
        )
    finally:
        conn.close()


def test_sigterm_to_the_whole_process_group_ends_the_worker(rabbitmq_url: str, tmp_path: Path) -> None:  # noqa: F811
    """Each worker process gets two SIGTERMs (its own, and the one the main process forwards): it ends
    at once, like kill -9, and what it left unacked is scored after a restart, once."""
    db, queue = tmp_path / "scores.db", f"agentevals-test-group-{tmp_path.name}"
    runs = make_runs(2000)
    publish_runs(rabbitmq_url, queue, runs, ["slow"])
    worker = start_worker(rabbitmq_url, queue, db, threads=8)
    try:
        wait_until(lambda: len(score_rows(db)) >= 50, what="the first records")
        os.killpg(worker.pid, signal.SIGTERM)
        worker.communicate(timeout=60)  # Dramatiq alone: the worker process never exits
        assert len(score_rows(db)) < 2000, "the worker finished before the signal: nothing was tested"
        worker = start_worker(rabbitmq_url, queue, db, threads=8)
        wait_until(lambda: len(score_rows(db)) == 2000)
    finally:
        stop(worker)
        delete_queue(rabbitmq_url, queue)
    assert _rows_per_pair(db) == Counter({(run.run_id, "slow"): 1 for run in runs})
