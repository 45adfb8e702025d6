"""Judged scorers on workers: scored through the fake judge, and the judge cap on Redis holds across a
worker in this process and one in a subprocess."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from worker_helpers import (  # noqa: F401  (fixtures)
    delete_queue,
    fake_judge,
    judged_scorer,
    make_runs,
    publish_runs,
    redis_url,
    score_rows,
    start_worker,
    stop,
    wait_until,
)

from agentevals._engine._config import normalize_scorers
from agentevals._engine._forward._codec import batch_text, run_entry_text
from agentevals._worker._actor import WorkerApp
from agentevals._worker._gate import WorkerGate
from agentevals._worker._group_write import GroupWriter
from agentevals._worker._judge_gate import JudgeCaps
from agentevals._worker._score_message import MessageScorer
from agentevals._worker._setup import WorkerConfig
from agentevals.sinks import SQLiteSink
from agentevals.testing import ChatRequest, FakeJudgeServer


class _InFlight:
    """A fake-judge responder that answers after ``latency`` seconds and notes the most requests it
    had under way at once."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.now = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> dict[str, bool]:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.latency)
        with self.lock:
            self.now -= 1
        return {"correct": "answer" in request.prompt}


@pytest.fixture
def queue(redis_url: str) -> Iterator[str]:  # noqa: F811
    name = f"agentevals-test-{uuid.uuid4().hex[:12]}"
    yield name
    delete_queue(redis_url, name)


def test_the_judge_cap_holds_across_worker_processes(redis_url: str, queue: str, tmp_path: Path) -> None:  # noqa: F811
    responder = _InFlight(latency=0.1)
    db = tmp_path / "scores.db"
    cap = ["--judge-concurrency", "3"]
    with FakeJudgeServer(responder=responder) as server:
        config = WorkerConfig(
            broker=redis_url, scorers="-", sinks=(str(db),), queue=queue, judge_concurrency=3,
            rate_limit_backend=redis_url,
        )  # fmt: skip
        app = WorkerApp(config, normalize_scorers([judged_scorer(fake_judge(server.url))]))
        there = start_worker(
            redis_url, queue, db, *cap, threads=12, scorers="worker_helpers:JUDGED",
            env={"AGENTEVALS_TEST_JUDGE_URL": server.url},
        )  # fmt: skip
        here = app.worker(threads=12)
        try:
            publish_runs(redis_url, queue, make_runs(3), ["verdict"])
            wait_until(lambda: len(score_rows(db)) == 3, what="the subprocess worker's first records")
            here.start()  # both workers take messages from here on
            publish_runs(redis_url, queue, make_runs(60), ["verdict"])
            wait_until(lambda: len(score_rows(db)) == 63)
        finally:
            here.stop()
            app.broker.close()
            output = stop(there)
    assert responder.most == 3, output  # never more than the cap, and the cap was reached
    assert {(r[1], r[2]) for r in score_rows(db)} == {("verdict", "scored")}
    assert 0 < app.scorer.counts["messages"] < 60, "one worker took every message: nothing was shared"


async def test_a_per_model_cap_holds_without_a_global_one(redis_url: str, tmp_path: Path) -> None:  # noqa: F811
    responder = _InFlight(latency=0.05)
    with FakeJudgeServer(responder=responder) as server:
        caps = JudgeCaps(
            redis.Redis.from_url(redis_url), None, {"openai/gpt-4o-mini": 2}, prefix=f":{uuid.uuid4().hex}"
        )
        entries = normalize_scorers([judged_scorer(fake_judge(server.url))])
        scorer = MessageScorer(
            entries, GroupWriter([SQLiteSink(tmp_path / "scores.db")]), gate=WorkerGate(entries, caps=caps)
        )
        payloads = [batch_text([run_entry_text(run, ["verdict"], entity="bot")]) for run in make_runs(12)]
        records = [r for rs in await asyncio.gather(*(scorer.handle(p) for p in payloads)) for r in rs]
        await scorer.writer.close()
    assert responder.most == 2
    assert [r.outcome for r in records] == ["scored"] * 12
