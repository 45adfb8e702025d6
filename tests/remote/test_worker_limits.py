"""What a worker applies around scorer calls, as the engine does in process: budgets (shared in Redis
across worker processes), the circuit breaker per judge model, the judge caps counted per judge request,
each scorer entry's ``max_concurrency`` and ``--redact``. Real brokers, the fake judge server."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from forwarder_helpers import free_port
from worker_helpers import (  # noqa: F401  (fixtures)
    delete_queue,
    fake_judge,
    judged_scorer,
    make_runs,
    publish_runs,
    rabbitmq_url,
    redis_url,
    score_rows,
    start_worker,
    stop,
    wait_until,
)

from agentevals import Judge, Run, create_scorer
from agentevals._engine._config import normalize_scorers
from agentevals._engine._forward._codec import batch_text, run_entry_text
from agentevals._worker._actor import WorkerApp
from agentevals._worker._gate import LimitsUnavailable
from agentevals._worker._setup import WorkerConfig
from agentevals.engine import Breaker, ScorerEntry
from agentevals.redaction import EMAIL, mask
from agentevals.testing import ChatRequest, FakeJudge, FakeJudgeServer, Reply

MODEL = "openai/gpt-4o-mini"


class Clock:
    """A clock the test moves by hand: the breaker's open time passes without sleeping."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


CLOCK = Clock()
#: ``--limits`` objects the workers of these tests load.
HAND_CLOCK_BREAKER = {"breaker": Breaker(failures=3, failure_rate=None, reset_after=30.0, clock=CLOCK)}
#: ``--redact`` for the redaction test.
REDACT = mask([EMAIL])


class InFlight:
    """A fake-judge responder that answers after ``latency`` seconds and notes the most requests it
    had under way at once."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.now = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Reply:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.latency)
        with self.lock:
            self.now -= 1
        return Reply.json({"correct": True})


def quick_judge(url: str) -> Judge:
    """The fake judge with one attempt per call: each failure the server gives is one failed call."""
    return FakeJudge(model=MODEL, api_base=url, api_key="fake-key", timeout=10.0, max_attempts=1)


def three_calls_scorer(judge: Judge) -> Any:
    """A scorer whose one step makes three judge requests at once."""

    async def ask_three(run: Run, **_: Any) -> float:
        replies = await asyncio.gather(*(judge.complete(f"part {i} of {run.input_text}") for i in range(3)))
        return float(len(replies) == 3)

    return create_scorer(id="three", judge=judge).generate_score(ask_three)


def __getattr__(name: str) -> Any:
    """``JUDGED``: the judged scorer on the fake judge at ``$AGENTEVALS_TEST_JUDGE_URL`` (for workers in
    subprocesses)."""
    if name == "JUDGED":
        return {"verdict": judged_scorer(fake_judge(os.environ["AGENTEVALS_TEST_JUDGE_URL"]))}
    raise AttributeError(name)


@pytest.fixture
def queue(redis_url: str) -> Iterator[str]:  # noqa: F811
    name = f"agentevals-test-{uuid.uuid4().hex[:12]}"
    yield name
    delete_queue(redis_url, name)


def rows(db: Path) -> list[tuple[str, str, str | None]]:
    """``(scorer_id, outcome, skip_reason)`` of every scores row."""
    conn = sqlite3.connect(db, timeout=30)
    try:
        return conn.execute("SELECT scorer_id, outcome, skip_reason FROM agentevals_scores").fetchall()
    finally:
        conn.close()


def test_a_calls_budget_lets_exactly_n_requests_through_across_worker_processes(
    redis_url: str,  # noqa: F811
    queue: str,
    tmp_path: Path,
) -> None:
    """A worker in this process spends 6 of 10 calls; then a worker of two processes (the budget from
    the command line) gets exactly the 4 left between them: were the budget per process, either of
    them alone could make 10 calls."""
    db = tmp_path / "scores.db"
    with FakeJudgeServer(responder=InFlight(latency=0.05)) as server:
        config = WorkerConfig(
            broker=redis_url, scorers="-", sinks=(str(db),), queue=queue, rate_limit_backend=redis_url,
            budgets=("calls=10/day",),
        )  # fmt: skip
        app = WorkerApp(config, normalize_scorers({"verdict": judged_scorer(fake_judge(server.url))}))
        here = app.worker(threads=4)
        here.start()
        try:
            publish_runs(redis_url, queue, make_runs(6), ["verdict"])
            wait_until(lambda: len(score_rows(db)) == 6, what="the first worker's records")
        finally:
            here.stop()
            app.broker.close()
        there = start_worker(
            redis_url, queue, db, "--budget", "calls=10/day", processes=2, threads=2,
            scorers="test_worker_limits:JUDGED", env={"AGENTEVALS_TEST_JUDGE_URL": server.url},
        )  # fmt: skip
        try:
            publish_runs(redis_url, queue, make_runs(30), ["verdict"])
            wait_until(lambda: len(score_rows(db)) == 36)
        finally:
            output = stop(there)
    assert len(server.requests) == 10, output
    assert app.scorer.counts["scored"] == 6
    assert Counter(rows(db)) == {("verdict", "scored", None): 10, ("verdict", "skipped", "budget"): 26}
    assert "judge budget 10 calls/day spent" in output  # said once per process that met it
    assert "budgets={'10 calls/day': 'spent 10" in output  # a stop line


def test_the_breaker_opens_skips_runs_and_closes_again(
    redis_url: str,  # noqa: F811
    queue: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="agentevals")
    db = tmp_path / "scores.db"
    with FakeJudgeServer(
        [Reply.server_error()] * 3, responder=lambda _: Reply.json({"correct": True})
    ) as server:
        config = WorkerConfig(
            broker=redis_url, scorers="-", sinks=(str(db),), queue=queue,
            limits="test_worker_limits:HAND_CLOCK_BREAKER",
        )  # fmt: skip
        app = WorkerApp(config, normalize_scorers({"verdict": judged_scorer(quick_judge(server.url))}))
        worker = app.worker(threads=1)
        worker.start()
        try:
            publish_runs(redis_url, queue, make_runs(3), ["verdict"])
            wait_until(lambda: len(score_rows(db)) == 3)
            publish_runs(redis_url, queue, make_runs(4), ["verdict"])
            wait_until(lambda: len(score_rows(db)) == 7)
            opened = app.gate.summary()
            CLOCK.now += 31  # the open time passes: the next call is the probe
            publish_runs(redis_url, queue, make_runs(3), ["verdict"])
            wait_until(lambda: len(score_rows(db)) == 10)
        finally:
            worker.stop()
            app.broker.close()
    assert len(server.requests) == 3 + 3, "calls were made while the breaker was open"
    assert Counter(rows(db)) == {
        ("verdict", "failed", None): 3,
        ("verdict", "skipped", "judge_unavailable"): 4,
        ("verdict", "scored", None): 3,
    }
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len([w for w in warnings if "circuit breaker open after 3 consecutive" in w]) == 1
    assert len([w for w in warnings if "circuit breaker closed" in w]) == 1
    assert "open, opened 1, refused 4" in opened
    assert "closed, opened 1, refused 4" in app.gate.summary()


async def test_the_judge_cap_counts_requests_not_scorer_calls(
    redis_url: str,  # noqa: F811
    queue: str,
    tmp_path: Path,
) -> None:
    responder = InFlight(latency=0.1)
    with FakeJudgeServer(responder=responder) as server:
        config = WorkerConfig(
            broker=redis_url, scorers="-", sinks=(str(tmp_path / "s.db"),), queue=queue,
            judge_concurrency=2, rate_limit_backend=redis_url,
        )  # fmt: skip
        app = WorkerApp(config, normalize_scorers([three_calls_scorer(quick_judge(server.url))]))
        message = batch_text([run_entry_text(run, ["three"], entity="bot") for run in make_runs(4)])
        records = await app.scorer.handle(message)
        await app.writer.close()
        app.broker.close()
    assert [r.outcome for r in records] == ["scored"] * 4
    assert len(server.requests) == 12
    assert responder.most == 2  # one scorer call alone makes 3 at once: the cap held each request


async def test_a_model_rate_lets_a_burst_through_then_holds_every_worker_of_the_queue(
    redis_url: str,  # noqa: F811
    queue: str,
) -> None:
    import redis

    from agentevals._worker._judge_gate import JudgeCaps

    client = redis.Redis.from_url(redis_url)
    prefix = f":{queue}"
    one = JudgeCaps(client, None, prefix=prefix, rates={MODEL: (3, 60.0)})
    other_worker = JudgeCaps(client, None, prefix=prefix, rates={MODEL: (3, 60.0)})
    other_queue = JudgeCaps(client, None, prefix=f"{prefix}-other", rates={MODEL: (3, 60.0)})
    try:
        for caps in (one, other_worker, one):
            (await caps.hold(MODEL))()  # the burst: 3 at once
        for caps in (one, other_worker):  # the 4th waits ~20 s (60 s / 3), in either worker
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(caps.hold(MODEL), 0.5)
        (await one.hold("another/model"))()  # no rate of its own
        (await other_queue.hold(MODEL))()  # another queue, another rate
    finally:
        client.delete(*client.keys(f"agentevals-judge-rate{prefix}*"))
        client.close()


async def test_a_model_rate_spaces_a_workers_judge_requests(
    redis_url: str,  # noqa: F811
    queue: str,
    tmp_path: Path,
) -> None:
    arrivals: list[float] = []

    def noted(request: ChatRequest) -> Reply:
        arrivals.append(time.monotonic())
        return Reply.json({"correct": True})

    with FakeJudgeServer(responder=noted) as server:
        config = WorkerConfig(
            broker=redis_url, scorers="-", sinks=(str(tmp_path / "s.db"),), queue=queue,
            model_rates={MODEL: (2, 0.5)}, rate_limit_backend=redis_url,
        )  # fmt: skip
        app = WorkerApp(config, normalize_scorers({"verdict": judged_scorer(quick_judge(server.url))}))
        message = batch_text([run_entry_text(run, ["verdict"], entity="bot") for run in make_runs(6)])
        await quick_judge(server.url).complete("warm-up")  # outside the gate: LiteLLM imported, no rate spent
        arrivals.clear()
        started = time.monotonic()
        records = await app.scorer.handle(message)
        await app.writer.close()
        app.broker.close()
    assert [r.outcome for r in records] == ["scored"] * 6
    # 2 at once, then one every 0.25 s: the 6th goes no sooner than 4 spacings after the first, which
    # went after the message was taken (the limiter keeps time on the Redis server's clock: a small
    # allowance for the two clocks).
    assert max(arrivals) - started >= 4 * 0.25 - 0.05


async def test_an_entrys_max_concurrency_holds_in_the_worker(
    redis_url: str,  # noqa: F811
    queue: str,
    tmp_path: Path,
) -> None:
    under_way: Counter[str] = Counter()
    most: Counter[str] = Counter()

    def tracked(key: str) -> Any:
        async def score(run: Run, **_: Any) -> float:
            under_way[key] += 1
            most[key] = max(most[key], under_way[key])
            await asyncio.sleep(0.02)
            under_way[key] -= 1
            return 1.0

        return create_scorer(id=key).generate_score(score)

    scorers = {
        "capped": ScorerEntry(scorer=tracked("capped"), max_concurrency=2),
        "free": tracked("free"),
    }
    config = WorkerConfig(broker=redis_url, scorers="-", sinks=(str(tmp_path / "s.db"),), queue=queue)
    app = WorkerApp(config, normalize_scorers(scorers))
    message = batch_text([run_entry_text(run, ["capped", "free"], entity="bot") for run in make_runs(10)])
    records = await app.scorer.handle(message)
    await app.writer.close()
    app.broker.close()
    assert Counter(r.outcome for r in records) == {"scored": 20}
    assert most["capped"] == 2
    assert most["free"] == 10  # the same runs, no cap: all at once


def test_redact_masks_the_stored_records(rabbitmq_url: str, tmp_path: Path) -> None:  # noqa: F811
    queue = f"agentevals-test-{uuid.uuid4().hex[:12]}"
    db = tmp_path / "scores.db"
    runs = [
        Run(
            run_id=f"mail-{uuid.uuid4().hex[:8]}-{i}",
            input=f"mail ann{i}@example.com",
            output="bob@example.org",
        )
        for i in range(5)
    ]
    worker = start_worker(rabbitmq_url, queue, db, "--redact", "test_worker_limits:REDACT")
    try:
        publish_runs(rabbitmq_url, queue, runs, ["length", "shout"])
        wait_until(lambda: len(score_rows(db)) == 10)
    finally:
        output = stop(worker)
        delete_queue(rabbitmq_url, queue)
    conn = sqlite3.connect(db)
    try:
        dump = "\n".join(conn.iterdump())
    finally:
        conn.close()
    assert "example.com" not in dump and "example.org" not in dump, output
    assert dump.count("mail <redacted>") >= 5
    assert {outcome for _, _, outcome in score_rows(db)} == {"scored"}


@pytest.mark.parametrize(
    "limits",
    [{"judge_concurrency": 2}, {"budgets": ("calls=5/day",)}],
    ids=["caps", "budget"],
)
async def test_a_redis_outage_of_the_limits_makes_the_message_retry(
    limits: dict[str, Any],
    redis_url: str,  # noqa: F811
    queue: str,
    tmp_path: Path,
) -> None:
    db = tmp_path / "scores.db"
    nowhere = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens: every Redis call fails
    with FakeJudgeServer(responder=InFlight(latency=0.0)) as server:
        config = WorkerConfig(
            broker=redis_url, scorers="-", sinks=(str(db),), queue=queue, rate_limit_backend=nowhere, **limits
        )
        app = WorkerApp(config, normalize_scorers({"verdict": judged_scorer(quick_judge(server.url))}))
        message = batch_text([run_entry_text(run, ["verdict"], entity="bot") for run in make_runs(3)])
        with pytest.raises(LimitsUnavailable, match="the message is retried"):
            await app.scorer.handle(message)
        stop_line = app.gate.summary()  # what the worker logs when it stops, Redis down or not
        await app.writer.close()
        app.broker.close()
    assert server.requests == []
    assert score_rows(db) == []  # no error record stored: the broker redelivers the message
    assert ("budgets=unknown (ConnectionError" in stop_line) == ("budgets" in limits), stop_line
