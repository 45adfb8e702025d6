"""Scoring workers (``agentevals worker``) on a real broker, judge-bound and end to end.

Run (one heavy thing at a time on a shared machine)::

    flock /tmp/agentevals-heavy.lock uv run python benchmarks/bench_workers.py [--broker URL] [--only NAME]
        [--runs-per-message N]

- ``scaling``: judge-bound throughput (one judge call per run on the fake judge, 200 ms latency) with 1
  and with 2 worker processes scoring 16 runs at once each. Target: 2 processes >= 1.8x one.
- ``ideal``: one worker process at 32 concurrent judge calls vs the ideal 32 / 0.2 s = 160 runs/s.
  Target: >= 90% of ideal.
  Both publish one run a message (``--threads`` = runs at once) unless ``--runs-per-message N`` (batch
  messages, as the agents' forwarder sends; ``--threads`` = runs at once / N).
- ``latency``: a ``ScoringEngine(broker=...)`` in this process submits runs at 500/s for 6 s (two code
  scorers); submit-to-stored latency of each run (when its row is first seen in the SQLite store,
  polled every 10 ms). Target: p50 < 1 s.
- ``cpu``: the judge client alone: CPU per ``Judge.complete`` call (the event loop's thread, and the whole
  process with LiteLLM's executor threads), 32 calls at once against the same fake judge.
- ``floor``: how much CPU a judged run may cost for one process at 32 calls in flight to stay near the
  ideal: a bare aiohttp client (no LiteLLM, no worker) spinning 0-4 ms of CPU around each call.

Workers run as subprocesses (``python -m agentevals.cli worker``) loading this module's scorers. The fake
judge runs in a process of its own (so its threads do not share a GIL with this one); each judged
measurement reports the workers' CPU per run and utilisation (from ``/proc``), the fake judge's CPU per
request, and how its requests arrived: the most that started within any 20 ms (32 in waves of 32, a few
in a sliding window).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from bisect import bisect_left
from dataclasses import dataclass
from multiprocessing.connection import Connection
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
    return _judge_at(os.environ["BENCH_JUDGE_URL"], int(os.environ.get("BENCH_JUDGE_CONCURRENCY", "256")))


def _judge_at(url: str, concurrency: int = 256) -> Judge:
    return FakeJudge(
        model="openai/gpt-4o-mini",
        api_base=url,
        api_key="fake-key",
        timeout=30.0,
        max_concurrency=concurrency,
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
        path = os.pathsep.join(p for p in (str(HERE), os.environ.get("PYTHONPATH", "")) if p)
        env = {**os.environ, "PYTHONPATH": path, "BENCH_JUDGE_URL": judge,
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

    def cpu(self) -> float:
        """CPU seconds used so far by the worker's processes (the main one and those it started)."""
        return sum(_cpu_seconds(pid) for pid in _process_tree(self.process.pid))


def _process_tree(root: int) -> list[int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents[int(entry)] = int(_stat_fields(int(entry))[1])
            except (OSError, IndexError, ValueError):
                continue
    tree, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier]
        tree += frontier
    return tree


def _stat_fields(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    return text[text.rindex(")") + 2 :].split()  # after the command name: state, ppid, ...


def _cpu_seconds(pid: int) -> float:
    try:
        fields = _stat_fields(pid)
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


class JudgeProcess:
    """The fake judge (``LATENCY`` a reply) in a process of its own; it notes when each request arrived."""

    def __init__(self, latency: float = LATENCY, spread: float = 0.0) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, latency, spread), daemon=True)
        self.delays: list[float] = []  # the delays of the replies counted by the last ``take``
        self.process.start()
        self.url: str = self.conn.recv()

    def take(self) -> tuple[float, list[float]]:
        """The server process's CPU seconds so far, and the arrival times (``time.monotonic``) of the
        requests since the last call."""
        self.conn.send("take")
        cpu, arrivals, self.delays = self.conn.recv()
        return float(cpu), list(arrivals)

    def stop(self) -> None:
        self.conn.send("stop")
        self.process.join(timeout=10)


def _serve(conn: Connection, latency: float, spread: float) -> None:
    """Each reply waits ``latency``, or with ``spread`` a delay drawn evenly from ``latency * (1 ± spread)``
    (the same mean; a fixed seed, so runs draw the same delays)."""
    arrivals: list[float] = []
    delays: list[float] = []
    draw = random.Random(17)

    def responder(_: Any) -> Reply:
        arrivals.append(time.monotonic())
        delays.append(latency * (1 + draw.uniform(-spread, spread)) if spread else latency)
        return Reply.slow(delays[-1], {"correct": True})

    with FakeJudgeServer(responder=responder) as server:
        conn.send(server.url)
        while conn.recv() == "take":
            taken, arrivals[:] = list(arrivals), []
            served, delays[:] = list(delays), []
            conn.send((time.process_time(), taken, served))


def burst(arrivals: list[float], window: float = 0.02) -> int:
    """The most requests that started within any ``window`` seconds."""
    times = sorted(arrivals)
    return max((i + 1 - bisect_left(times, t - window) for i, t in enumerate(times)), default=0)


@dataclass(frozen=True)
class Judged:
    """One judged measurement: throughput and where the CPU went."""

    runs_per_s: float
    runs: int
    seconds: float
    worker_cpu: float
    judge_cpu: float
    burst: int
    processes: int

    def describe(self) -> str:
        return (
            f"worker CPU {self.worker_cpu / self.runs * 1000:.2f} ms/run, "
            f"{self.worker_cpu / self.seconds / self.processes:.0%} of a core per process; "
            f"fake judge CPU {self.judge_cpu / self.runs * 1000:.2f} ms/request; "
            f"at most {self.burst} requests started within 20 ms"
        )


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


def publish(broker_url: str, queue: str, batch: list[Run], keys: list[str], per_message: int = 1) -> None:
    """One batch message (as the forwarder writes) per ``per_message`` runs."""
    import dramatiq

    from agentevals._engine._forward._codec import ACTOR, batch_text, run_entry_text
    from agentevals._worker._setup import make_broker

    broker = make_broker(broker_url)
    try:
        broker.declare_queue(queue)
        for start in range(0, len(batch), per_message):
            runs_in = batch[start : start + per_message]
            payload = batch_text([run_entry_text(run, keys, entity="bench") for run in runs_in])
            broker.enqueue(
                dramatiq.Message(queue_name=queue, actor_name=ACTOR, args=(payload,), kwargs={}, options={})
            )
    finally:
        broker.close()


def delete_queue(broker_url: str, queue: str) -> None:
    from agentevals._worker._setup import make_broker

    broker = make_broker(broker_url)
    try:
        for name in (queue, f"{queue}.DQ", f"{queue}.XQ"):
            if broker_url.startswith("amqp"):
                broker.channel.queue_delete(name)
            else:
                broker.flush(name)
    finally:
        broker.close()


def judged_throughput(
    broker: str, judge: JudgeProcess, processes: int, concurrency: int, n: int, per_message: int = 1
) -> Judged:
    """Runs per second scored and stored, from the first publish to the last row; each process scores
    ``concurrency`` runs at once (``concurrency / per_message`` threads, one message each)."""
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    threads = concurrency // per_message
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "scores.db"
        worker = Worker(broker, queue, db, "JUDGED", processes, threads, judge.url)
        try:
            warm = concurrency * processes  # warm-up: connections, LiteLLM imports
            publish(broker, queue, runs(warm), ["verdict"], per_message)
            while stored(db) < warm:
                time.sleep(0.05)
            judge_cpu, _ = judge.take()
            worker_cpu = worker.cpu()
            started = time.perf_counter()
            publish(broker, queue, runs(n), ["verdict"], per_message)
            while stored(db) < warm + n:
                time.sleep(0.02)
            seconds = time.perf_counter() - started
            worker_cpu = worker.cpu() - worker_cpu
            judge_after, arrivals = judge.take()
            return Judged(
                runs_per_s=n / seconds,
                runs=n,
                seconds=seconds,
                worker_cpu=worker_cpu,
                judge_cpu=judge_after - judge_cpu,
                burst=burst(arrivals),
                processes=processes,
            )
        finally:
            worker.stop()
            delete_queue(broker, queue)


def bench_scaling(broker: str, judge: JudgeProcess, per_message: int = 1) -> None:
    one = judged_throughput(broker, judge, 1, 16, 640, per_message)
    two = judged_throughput(broker, judge, 2, 16, 1280, per_message)
    ideal = 16 / LATENCY
    ratio = two.runs_per_s / one.runs_per_s
    print(f"scaling ({per_message} run(s) a message): 1 process x 16 runs at once {one.runs_per_s:.1f} "
          f"runs/s ({one.runs_per_s / ideal:.0%} of {ideal:.0f}); 2 processes {two.runs_per_s:.1f} runs/s; "
          f"ratio {ratio:.2f} (target >= 1.8)\n"
          f"  1 process: {one.describe()}\n  2 processes: {two.describe()}")  # fmt: skip


def bench_ideal(broker: str, judge: JudgeProcess, per_message: int = 1) -> None:
    measured = judged_throughput(broker, judge, 1, 32, 960, per_message)
    latency = statistics.fmean(judge.delays)  # LATENCY, or the mean of the delays drawn with a spread
    ideal = 32 / latency
    rate = measured.runs_per_s
    print(f"ideal ({per_message} run(s) a message): 1 process x 32 runs at once {rate:.1f} runs/s = "
          f"{rate / ideal:.1%} of ideal {ideal:.0f} (replies took {latency * 1000:.1f} ms on average; "
          f"target >= 90%)\n  {measured.describe()}")  # fmt: skip


def bench_cpu(broker: str, judge: JudgeProcess, per_message: int = 1) -> None:
    del broker, per_message  # the judge client alone
    calls, concurrency = 640, 32

    async def measure() -> tuple[float, float, float]:
        client = _judge_at(judge.url)
        schema = Verdict

        async def one(i: int, limit: asyncio.Semaphore) -> None:
            async with limit:
                reply = await client.complete(f"Is answer {i} right?", schema=schema)
                assert reply.value.correct

        warm = asyncio.Semaphore(concurrency)
        await asyncio.gather(*(one(i, warm) for i in range(2 * concurrency)))  # connections, imports
        limit = asyncio.Semaphore(concurrency)
        thread, process, wall = time.thread_time(), time.process_time(), time.perf_counter()
        await asyncio.gather(*(one(i, limit) for i in range(calls)))
        return time.thread_time() - thread, time.process_time() - process, time.perf_counter() - wall

    judge.take()
    thread, process, wall = asyncio.run(measure())
    judge_cpu, arrivals = judge.take()
    print(f"cpu: {calls} Judge.complete calls, {concurrency} at once: {thread / calls * 1000:.2f} ms CPU per "
          f"call on the event loop's thread, {process / calls * 1000:.2f} ms in the whole process; "
          f"{calls / wall:.1f} calls/s ({calls / wall / (concurrency / LATENCY):.1%} of ideal); fake judge "
          f"CPU {judge_cpu / len(arrivals) * 1000:.2f} ms/request")  # fmt: skip


def bench_floor(broker: str, judge: JudgeProcess, per_message: int = 1) -> None:
    """The CPU a judged run may cost for 32 calls in flight to stay near the ideal: a bare aiohttp client
    (no LiteLLM, no worker) that spins for a given CPU time around each call, half before, half after."""
    del broker, per_message
    import aiohttp

    calls, concurrency = 640, 32
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Is it right?"}]}

    def spin(seconds: float) -> None:
        end = time.thread_time() + seconds
        while time.thread_time() < end:
            pass

    async def measure(extra: float) -> tuple[float, float]:
        async with aiohttp.ClientSession() as session:

            async def one(limit: asyncio.Semaphore) -> None:
                async with limit:
                    spin(extra / 2)
                    async with session.post(f"{judge.url}/chat/completions", json=body) as reply:
                        await reply.json()
                    spin(extra / 2)

            warm = asyncio.Semaphore(concurrency)
            await asyncio.gather(*(one(warm) for _ in range(2 * concurrency)))
            limit = asyncio.Semaphore(concurrency)
            process, wall = time.process_time(), time.perf_counter()
            await asyncio.gather(*(one(limit) for _ in range(calls)))
            return time.process_time() - process, time.perf_counter() - wall

    for extra_ms in (0.0, 1.0, 2.0, 3.0, 4.0):
        process, wall = asyncio.run(measure(extra_ms / 1000))
        print(f"floor: bare client + {extra_ms:.0f} ms of CPU a call: {process / calls * 1000:.2f} ms CPU "
              f"per call in all, {calls / wall / (concurrency / LATENCY):.1%} of ideal")  # fmt: skip


def bench_latency(broker: str, judge: JudgeProcess, per_message: int = 1) -> None:
    del per_message  # the engine's forwarder batches as it does in production
    rate, seconds = 500, 6.0
    from agentevals import ScoringEngine
    from agentevals.engine import BrokerOptions

    queue = f"bench-{uuid.uuid4().hex[:8]}"
    scorers = __getattr__("CODE")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "scores.db"
        worker = Worker(broker, queue, db, "CODE", 1, 8, judge.url)
        engine = ScoringEngine(scorers, broker=BrokerOptions(broker, queue=queue))
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
    benches = {
        "cpu": bench_cpu, "floor": bench_floor, "scaling": bench_scaling, "ideal": bench_ideal,
        "latency": bench_latency,
    }  # fmt: skip
    parser.add_argument("--only", choices=list(benches), action="append")
    parser.add_argument(
        "--runs-per-message", type=int, default=1, help="judged runs a message (threads: concurrency / this)"
    )
    parser.add_argument(
        "--latency-spread", type=float, default=0.0,
        help="each judge reply waits 200 ms x (1 ± this), evenly drawn (default 0: exactly 200 ms)",
    )  # fmt: skip
    args = parser.parse_args()
    judge = JudgeProcess(spread=args.latency_spread)
    try:
        for name in args.only or list(benches):
            benches[name](args.broker, judge, args.runs_per_message)
    finally:
        judge.stop()


if __name__ == "__main__":
    main()
