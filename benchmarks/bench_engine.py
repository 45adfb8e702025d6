"""ScoringEngine hot path and memory: submit() cost, and RSS while 1,000,000 runs are offered.

Run: ``uv run python benchmarks/bench_engine.py``. Targets on a 2-core machine: submit() median <= 20 µs;
memory flat (bounded queue) while 1,000,000 runs are offered at sampling 0.01. Baselines measured in the
same run: an empty function call and a lock-guarded ``deque.append`` (the floor of any thread-safe
hand-off), so the ratios say what sampling and the queue add.
"""

from __future__ import annotations

import asyncio
import copy
import statistics
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentevals import Run, ScoreRecord, ScoringEngine, create_scorer
from agentevals.engine import DeliveryOptions, QueueOptions, ScoringOptions

N_SUBMIT = 50_000
N_OFFERED = 1_000_000
DEAD_LETTER = Path(tempfile.gettempdir()) / "agentevals-bench-deadletter.jsonl"


class CountingSink:
    """Counts records and keeps nothing (so the sink cannot be what grows)."""

    name = "counting"

    def __init__(self) -> None:
        self.count = 0

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        self.count += len(records)

    async def close(self) -> None:
        return None


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def timings_us(fn: Callable[[Any], Any], items: Sequence[Any]) -> list[float]:
    clock = time.perf_counter_ns
    out = []
    for item in items:
        start = clock()
        fn(item)
        out.append((clock() - start) / 1000)
    return out


def summary(label: str, values: list[float], base: float | None = None) -> None:
    values = sorted(values)
    median = statistics.median(values)
    p99 = values[int(0.99 * (len(values) - 1))]
    ratio = f"  ({median / base:.1f}x the lock+append baseline)" if base else ""
    print(f"{label:<46} median {median:6.2f} µs   p99 {p99:7.2f} µs{ratio}")


def make_runs(n: int, prefix: str) -> list[Run]:
    return [
        Run(run_id=f"{prefix}-{i}", input="What is the capital of France?", output="Paris.") for i in range(n)
    ]


def fresh(template: Run, run_id: str) -> Run:
    """A new run with its own id, ~10x cheaper than ``model_copy(update=...)`` (the generator must not
    dominate the measurement); each run is garbage as soon as the engine is done with it."""
    run = copy.copy(template)
    run.__dict__["run_id"] = run_id
    return run


async def cheap(run: Run) -> float:
    return 1.0


def main() -> None:
    scorer = create_scorer(id="cheap").generate_score(cheap)
    items = make_runs(N_SUBMIT, "s")

    # Baselines.
    lock, queue = threading.Lock(), deque[Any]()

    def locked_append(item: Any) -> None:
        with lock:
            queue.append(item)

    noop = timings_us(lambda item: None, items)
    base = timings_us(locked_append, items)
    summary("baseline: empty call", noop)
    summary("baseline: lock + deque.append", base)
    base_median = statistics.median(base)

    # submit(): every run sampled out (rate 0: hashing + counters only).
    engine = ScoringEngine(
        {"s": {"scorer": scorer, "sampling": 0.0}},
        sinks=[CountingSink()],
        delivery=DeliveryOptions(dead_letter=DEAD_LETTER),
    )
    summary("submit(), sampled out (ratio 0.0)", timings_us(engine.submit, items), base_median)
    engine.shutdown()

    # submit(): every run accepted at ratio 1.0 by two scorers, scored concurrently on the loop thread.
    sink = CountingSink()
    engine = ScoringEngine(
        {"a": {"scorer": scorer, "sampling": 1.0}, "b": {"scorer": scorer.with_id("b"), "sampling": 0.5}},
        sinks=[sink],
        queue=QueueOptions(size=N_SUBMIT + 1),
        delivery=DeliveryOptions(dead_letter=DEAD_LETTER),
    )
    summary("submit(), accepted (ratio 1.0 + 0.5, 2 scorers)", timings_us(engine.submit, items), base_median)
    engine.flush(60)
    stats = engine.stats()
    print(
        f"  scored {stats.scored:,} records, dropped {stats.dropped}, "
        f"latency p50 {stats.latency_ms_p50:.1f} ms"
    )
    engine.shutdown()

    # Memory while 1,000,000 runs are offered at sampling 0.01 (runs built on the fly, then dropped).
    sink = CountingSink()
    engine = ScoringEngine(
        {"s": {"scorer": scorer, "sampling": 0.01}},
        sinks=[sink],
        queue=QueueOptions(size=10_000),
        delivery=DeliveryOptions(dead_letter=DEAD_LETTER),
    )
    template = Run(input="What is the capital of France?", output="Paris.")
    before = rss_mib()
    started = time.perf_counter()
    checkpoints = []
    for i in range(N_OFFERED):
        engine.submit(fresh(template, f"m-{i}"))
        if (i + 1) % 250_000 == 0:
            checkpoints.append(f"{(i + 1) // 1000}k: {rss_mib():.1f}")
    engine.flush(60)
    elapsed = time.perf_counter() - started
    after = rss_mib()
    stats = engine.stats()
    engine.shutdown()
    print(
        f"1,000,000 runs offered at 0.01 in {elapsed:.1f} s: accepted {stats.accepted:,}, "
        f"sampled out {stats.sampled_out:,}, dropped {stats.dropped}, written {sink.count:,}"
    )
    print(
        f"  RSS MiB before {before:.1f}, after {after:.1f} (delta {after - before:+.1f}); "
        + ", ".join(checkpoints)
    )

    # Overload: a slow scorer at ratio 1.0 with a 10,000-run queue; the queue bounds memory, drops counted.
    async def slow(run: Run) -> float:
        await asyncio.sleep(0.002)
        return 1.0

    engine = ScoringEngine(
        [create_scorer(id="slow").generate_score(slow)],
        sinks=[CountingSink()],
        queue=QueueOptions(size=10_000),
        scoring=ScoringOptions(max_concurrency=16),
        delivery=DeliveryOptions(dead_letter=DEAD_LETTER),
    )
    before = rss_mib()
    for i in range(200_000):
        engine.submit(fresh(template, f"o-{i}"))
    mid = rss_mib()
    stats = engine.stats()
    engine.shutdown(timeout=60)
    print(
        f"overload (200,000 runs, slow scorer, queue 10,000): accepted {stats.accepted:,}, dropped "
        f"{stats.dropped:,}, queued {stats.queued:,}; RSS MiB before {before:.1f}, after {mid:.1f}"
    )
    print("target: submit() median <= 20 µs; RSS flat while 1,000,000 runs are offered")


if __name__ == "__main__":
    main()
