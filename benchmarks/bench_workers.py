"""Scoring workers (``agentevals worker``) on a real broker, judge-bound and end to end.

Run (one heavy thing at a time on a shared machine)::

    flock /tmp/agentevals-heavy.lock uv run python benchmarks/bench_workers.py [--broker URL] [--only NAME]

- ``scaling``: judge-bound throughput (one judge call per run on the fake judge, 200 ms latency) with 1
  and with 2 worker processes of 16 threads each. Target: 2 processes >= 1.8x one.
- ``ideal``: one worker process at 32 concurrent judge calls vs the ideal 32 / 0.2 s = 160 runs/s.
  Target: >= 90% of ideal.
- ``latency``: a ``ScoringEngine(broker=...)`` in this process submits runs at 500/s for 6 s (two code
  scorers); submit-to-stored latency of each run (when its row is first seen in the SQLite store,
  polled every 10 ms). Target: p50 < 1 s.

Workers run as subprocesses (``python -m agentevals.cli worker``) loading this module's scorers.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentevals import Judge, Run, create_scorer
from agentevals.steps import PromptStep
from agentevals.testing import FakeJudge, FakeJudgeServer
from agentevals.testing._fake_judge import Reply

HERE = Path(__file__).parent
REPO = HERE.parent
LATENCY = 0.2  # seconds per judge call


class Verdict(BaseModel):
    correct: bool


def _judge() -> Judge:
    return FakeJudge(
        model="openai/gpt-4o-mini",
        api_base=os.environ["BENCH_JUDGE_URL"],
        api_key="fake-key",
        timeout=30.0,
        max_concurrency=int(os.environ.get("BENCH_JUDGE_CONCURRENCY", "256")),
    )


def __getattr__(name: str) -> Any:
    """``JUDGED`` (one judge call per run) and ``CODE`` (two code scorers): the workers' collections."""
    if name == "JUDGED":
        return [
            create_scorer(id="verdict", judge=_judge())
            .analyze(
                PromptStep(
                    description="verdict",
                    create_prompt=lambda run, **_: f"Is {run.output_text!r} right for {run.input_text!r}?",
                    output_schema=Verdict,
                )
            )
            .generate_score(lambda results, **_: 1.0 if results.analyze_step_result.correct else 0.0)
        ]
    if name == "CODE":
        return {
            "length": create_scorer(id="length").generate_score(lambda run, **_: float(len(run.output_text))),
            "polite": create_scorer(id="polite").generate_score(
                lambda run, **_: float("please" in run.output_text.lower())
            ),
        }
    raise AttributeError(name)


class Worker:
    """``agentevals worker`` in a subprocess; ready once each of its processes said so."""

    def __init__(
        self,
        broker: str,
        queue: str,
        db: Path,
        scorers: str,
        processes: int,
        threads: int,
        judge: str,
        judge_concurrency: int = 256,
    ) -> None:
        env = {**os.environ, "PYTHONPATH": str(HERE), "BENCH_JUDGE_URL": judge,
               "BENCH_JUDGE_CONCURRENCY": str(judge_concurrency)}  # fmt: skip
        command = [
            sys.executable, "-m", "agentevals.cli", "worker", "--broker", broker, "--queue", queue,
            "--scorers", f"bench_workers:{scorers}", "--sink", str(db),
            "--processes", str(processes), "--threads", str(threads),
        ]  # fmt: skip
        self.process = subprocess.Popen(
            command, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip
        self.lines: list[str] = []
        self.ready = threading.Semaphore(0)
        threading.Thread(target=self._read, daemon=True).start()
        for _ in range(processes):
            if not self.ready.acquire(timeout=120):
                self.stop()
                raise RuntimeError("the worker did not start:\n" + "".join(self.lines[-30:]))

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)
            if "is ready for action" in line:
                self.ready.release()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # the main process only: it stops its worker processes gracefully
        self.process.wait(timeout=120)


def stored(db: Path) -> int:
    try:
        conn = sqlite3.connect(db, timeout=30)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM agentevals_scores").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def runs(n: int) -> list[Run]:
    stamp = uuid.uuid4().hex[:8]
    return [
        Run(run_id=f"b-{stamp}-{i}", input=f"question {i}", output=f"answer {i}, please") for i in range(n)
    ]


def publish(broker_url: str, queue: str, batch: list[Run], keys: list[str]) -> None:
    import dramatiq

    from agentevals._remote._codec import ACTOR, run_message
    from agentevals._remote._worker_setup import make_broker

    broker = make_broker(broker_url)
    try:
        broker.declare_queue(queue)
        for run in batch:
            message = dramatiq.Message(
                queue_name=queue, actor_name=ACTOR, args=(run_message(run, keys, entity="bench"),), kwargs={},
                options={},
            )  # fmt: skip
            broker.enqueue(message)
    finally:
        broker.close()


def delete_queue(broker_url: str, queue: str) -> None:
    from agentevals._remote._worker_setup import make_broker

    broker = make_broker(broker_url)
    try:
        for name in (queue, f"{queue}.DQ", f"{queue}.XQ"):
            if broker_url.startswith("amqp"):
                broker.channel.queue_delete(name)
            else:
                broker.flush(name)
    finally:
        broker.close()


def judged_throughput(broker: str, judge: str, processes: int, threads: int, n: int) -> float:
    """Runs per second scored and stored, from the first publish to the last row."""
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "scores.db"
        worker = Worker(broker, queue, db, "JUDGED", processes, threads, judge)
        try:
            publish(broker, queue, runs(threads), ["verdict"])  # warm-up: connections, LiteLLM imports
            while stored(db) < threads:
                time.sleep(0.05)
            started = time.perf_counter()
            publish(broker, queue, runs(n), ["verdict"])
            while stored(db) < threads + n:
                time.sleep(0.02)
            return n / (time.perf_counter() - started)
        finally:
            worker.stop()
            delete_queue(broker, queue)


def bench_scaling(broker: str, judge: str) -> None:
    one = judged_throughput(broker, judge, 1, 16, 640)
    two = judged_throughput(broker, judge, 2, 16, 1280)
    ideal = 16 / LATENCY
    print(f"scaling: 1 process x 16 threads {one:.1f} runs/s ({one / ideal:.0%} of {ideal:.0f}); "
          f"2 processes {two:.1f} runs/s; ratio {two / one:.2f} (target >= 1.8)")  # fmt: skip


def bench_ideal(broker: str, judge: str) -> None:
    measured = judged_throughput(broker, judge, 1, 32, 960)
    ideal = 32 / LATENCY
    print(f"ideal: 1 process x 32 threads {measured:.1f} runs/s = {measured / ideal:.1%} of ideal "
          f"{ideal:.0f} (target >= 90%)")  # fmt: skip


def bench_latency(broker: str, judge: str, rate: int = 500, seconds: float = 6.0) -> None:
    from agentevals import ScoringEngine

    queue = f"bench-{uuid.uuid4().hex[:8]}"
    scorers = __getattr__("CODE")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "scores.db"
        worker = Worker(broker, queue, db, "CODE", 1, 8, judge)
        engine = ScoringEngine(scorers, broker=broker, broker_queue=queue)
        submitted: dict[str, float] = {}
        seen: dict[str, float] = {}
        try:
            batch = runs(int(rate * seconds))
            start = time.perf_counter()
            watcher = threading.Thread(target=_watch, args=(db, seen, len(batch)), daemon=True)
            watcher.start()
            for i, run in enumerate(batch):
                due = start + i / rate
                while (now := time.perf_counter()) < due:
                    time.sleep(min(due - now, 0.002))
                submitted[run.run_id] = time.perf_counter()
                engine.submit(run)
            sent = time.perf_counter() - start
            watcher.join(timeout=120)
        finally:
            engine.shutdown()
            worker.stop()
            delete_queue(broker, queue)
    latencies = sorted(seen[r] - submitted[r] for r in seen if r in submitted)
    p50 = statistics.median(latencies)
    p95 = latencies[int(len(latencies) * 0.95) - 1]
    print(f"latency: {len(batch)} runs submitted at {len(batch) / sent:.0f}/s, {len(latencies)} stored; "
          f"submit-to-stored p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, "
          f"max {latencies[-1] * 1000:.0f} ms (target p50 < 1 s)")  # fmt: skip


def _watch(db: Path, seen: dict[str, float], total: int) -> None:
    """Note when each run's row first appears in the store."""
    last, deadline = 0, time.perf_counter() + 180
    while len(seen) < total and time.perf_counter() < deadline:
        try:
            conn = sqlite3.connect(db, timeout=30)
            rows = conn.execute(
                "SELECT rowid, run_id FROM agentevals_runs WHERE rowid > ?", (last,)
            ).fetchall()
            conn.close()
        except sqlite3.OperationalError:
            rows = []
        now = time.perf_counter()
        for rowid, run_id in rows:
            seen.setdefault(run_id, now)
            last = max(last, rowid)
        time.sleep(0.01)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--broker", default="amqp://guest:guest@127.0.0.1:5672/")
    parser.add_argument("--only", choices=["scaling", "ideal", "latency"], action="append")
    args = parser.parse_args()
    chosen = args.only or ["scaling", "ideal", "latency"]
    with FakeJudgeServer(responder=lambda request: Reply.slow(LATENCY, {"correct": True})) as server:
        for name in chosen:
            {"scaling": bench_scaling, "ideal": bench_ideal, "latency": bench_latency}[name](
                args.broker, server.url
            )


if __name__ == "__main__":
    main()
