"""What the worker tests share: the real brokers (skip with the reason, fail under CI=true), a scorer
collection a worker subprocess imports (``worker_helpers:SCORERS``), publishing run messages the way
the agent side does, and reading what a store holds."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentevals import Judge, Run, Scorer, create_scorer
from agentevals._engine._forward._codec import ACTOR, batch_text, run_entry_text
from agentevals.steps import PromptStep
from agentevals.testing import FakeJudge

RABBITMQ_URL = "amqp://guest:guest@127.0.0.1:5672/"
REDIS_URL = "redis://127.0.0.1:6379/0"
HERE = Path(__file__).parent
REPO = HERE.parent.parent


LENGTH_RANGE = 1_000_000  # the length scorer's declared range: its stored score is length / LENGTH_RANGE


def _length(run: Run, **_: Any) -> float:
    return float(len(run.output_text))


def _shout(run: Run, **_: Any) -> float:
    return 1.0 if run.output_text.isupper() else 0.0


async def _slow(run: Run, **_: Any) -> float:
    await asyncio.sleep(0.01)  # a judge-like wait: messages are under way when a worker is killed
    return 1.0


def _poison(run: Run, **_: Any) -> float:
    raise RuntimeError(f"poison scorer: always fails (run {run.run_id})")


#: The collection the worker subprocesses load: ``--scorers worker_helpers:SCORERS``.
SCORERS = {
    "length": create_scorer(id="length", score_range=(0, LENGTH_RANGE)).generate_score(_length),
    "shout": create_scorer(id="shout").generate_score(_shout),
    "poison": create_scorer(id="poison").generate_score(_poison),
    "slow": create_scorer(id="slow").generate_score(_slow),
}


class Verdict(BaseModel):
    correct: bool


def judged_scorer(judge: Judge) -> Scorer:
    """A scorer with one judge call (its analyze step), 1.0 when the judge says correct."""
    return (
        create_scorer(id="verdict", judge=judge)
        .analyze(
            PromptStep(
                description="verdict",
                create_prompt=lambda run, **_: f"Is {run.output_text!r} right for {run.input_text!r}?",
                output_schema=Verdict,
            )
        )
        .generate_score(lambda results, **_: 1.0 if results.analyze_step_result.correct else 0.0)
    )


def fake_judge(url: str) -> Judge:
    return FakeJudge(
        model="openai/gpt-4o-mini", api_base=url, api_key="fake-key", timeout=10.0, max_concurrency=64
    )


def __getattr__(name: str) -> Any:
    """``JUDGED``: the judged scorer on the fake judge at ``$AGENTEVALS_TEST_JUDGE_URL`` (for workers in
    subprocesses, which cannot be handed the test's server any other way)."""
    if name == "JUDGED":
        return {"verdict": judged_scorer(fake_judge(os.environ["AGENTEVALS_TEST_JUDGE_URL"]))}
    raise AttributeError(name)


def service_url(url: str, port: int, name: str) -> str:
    """``url`` when something listens on 127.0.0.1:``port``; else skip (fail under CI=true)."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError as err:
        reason = f"no {name} on 127.0.0.1:{port} ({err}); start it to run the worker tests"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return url


@pytest.fixture(params=["rabbitmq", "redis"])
def broker_url(request: pytest.FixtureRequest) -> str:
    """Each real broker in turn."""
    if request.param == "rabbitmq":
        return service_url(RABBITMQ_URL, 5672, "RabbitMQ")
    return service_url(REDIS_URL, 6379, "Redis")


@pytest.fixture
def rabbitmq_url() -> str:
    return service_url(RABBITMQ_URL, 5672, "RabbitMQ")


@pytest.fixture
def redis_url() -> str:
    return service_url(REDIS_URL, 6379, "Redis")


@pytest.fixture
def queue(broker_url: str) -> Iterator[str]:
    """A queue of this test's own (removed afterwards), so tests never see each other's messages."""
    name = f"agentevals-test-{uuid.uuid4().hex[:12]}"
    yield name
    delete_queue(broker_url, name)


def make_runs(n: int, prefix: str = "run") -> list[Run]:
    stamp = uuid.uuid4().hex[:8]
    return [
        Run(run_id=f"{prefix}-{stamp}-{i}", input=f"question {i}", output=f"answer {i}") for i in range(n)
    ]


def publish(url: str, queue: str, payloads: Sequence[Any]) -> None:
    """Enqueue ``payloads`` on ``queue`` as the agent side's forwarder does (one Dramatiq message each)."""
    import dramatiq

    from agentevals._worker._setup import make_broker

    broker = make_broker(url)
    try:
        broker.declare_queue(queue)
        for payload in payloads:
            broker.enqueue(
                dramatiq.Message(queue_name=queue, actor_name=ACTOR, args=(payload,), kwargs={}, options={})
            )
    finally:
        broker.close()


def publish_runs(
    url: str,
    queue: str,
    runs: Sequence[Run],
    keys: Sequence[str],
    entity: str = "bot",
    *,
    per_message: int = 1,
) -> None:
    """Publish ``runs`` in batch messages of ``per_message`` runs, as the forwarder does."""
    texts = [run_entry_text(run, keys, entity=entity) for run in runs]
    publish(url, queue, [batch_text(texts[i : i + per_message]) for i in range(0, len(texts), per_message)])


def delete_queue(url: str, queue: str) -> None:
    from agentevals._worker._setup import make_broker

    broker = make_broker(url)
    try:
        if url.startswith("amqp"):
            channel = broker.channel
            for name in (queue, f"{queue}.DQ", f"{queue}.XQ"):
                channel.queue_delete(name)
        else:
            for name in (queue, f"{queue}.DQ", f"{queue}.XQ"):
                broker.flush(name)
    finally:
        broker.close()


def score_rows(db: Path) -> list[tuple[str, str, str]]:
    """``(run_id, scorer_id, outcome)`` of every scores row of the SQLite store ``db``."""
    if not db.exists():
        return []
    conn = sqlite3.connect(db, timeout=30)
    try:
        try:
            return conn.execute("SELECT run_id, scorer_id, outcome FROM agentevals_scores").fetchall()
        except sqlite3.OperationalError:  # the sink has not created the table yet
            return []
    finally:
        conn.close()


def run_ids(db: Path) -> list[str]:
    conn = sqlite3.connect(db, timeout=30)
    try:
        return [row[0] for row in conn.execute("SELECT run_id FROM agentevals_runs")]
    finally:
        conn.close()


def wait_until(done: Callable[[], bool], timeout: float = 60.0, what: str = "the records") -> None:
    """Poll ``done`` until it holds; fail after ``timeout`` seconds (a deadline, not a measurement)."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not arrive within {timeout} s")
        time.sleep(0.05)


def start_worker(
    broker: str,
    queue: str,
    sink: str | Path,
    *extra: str,
    processes: int = 1,
    threads: int = 4,
    scorers: str = "worker_helpers:SCORERS",
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """``agentevals worker`` in a subprocess, loading ``scorers`` (from this directory)."""
    path = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, **(env or {}), "PYTHONPATH": path}
    command = [
        sys.executable, "-m", "agentevals.cli", "worker",
        "--broker", broker, "--scorers", scorers, "--sink", str(sink), "--queue", queue,
        "--processes", str(processes), "--threads", str(threads), "--min-backoff", "0.05", *extra,
    ]  # fmt: skip
    return subprocess.Popen(
        command, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )


def kill_9(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the worker and every process it started (Dramatiq's worker processes), at once."""
    os.killpg(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)


def stop(process: subprocess.Popen[bytes], timeout: float = 60.0) -> str:
    """SIGTERM ``process``, wait for it and return what it printed."""
    if process.poll() is None:
        process.terminate()
    out, _ = process.communicate(timeout=timeout)
    return out.decode(errors="replace")
