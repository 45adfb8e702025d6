"""Rule sampling on the hot path: ``submit()`` with a four-rule policy against ratio and custom sampling.

Run: ``uv run python benchmarks/bench_sampling_rules.py``. Every run is sampled out (the decision alone
is measured, not the queue), by: ratio 0.0; the issue's policy as data (failures, complaints, checkout,
the rest at 0%), where each run falls through to the catch-all, the longest path; the same policy
written by hand as a custom sampler ``(run) -> bool`` (the same checks and the same hashed point).
Baseline in the same run: a lock-guarded ``deque.append``. Target: ``submit()`` median <= 20 µs, as
for any sampling (``bench_engine.py``); the ratio to the hand-written sampler is what the generic rules
and their per-rule counts (``stats().sampled_by_rule``) cost over code written for one policy.
"""

from __future__ import annotations

import statistics
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentevals import Run, ScoringEngine, create_scorer
from agentevals._engine._sampling import run_key, sample_point
from agentevals.engine import DeliveryOptions

N = 50_000
ROUNDS = 3
DEAD_LETTER = Path(tempfile.gettempdir()) / "agentevals-bench-deadletter.jsonl"
POLICY = {
    "type": "rules",
    "rules": [
        {"when": {"any": [{"error": True}, {"tool_failed": True}]}, "rate": 1.0},
        {"when": {"metadata.feedback": "negative"}, "rate": 1.0},
        {"when": {"entity": "checkout"}, "rate": 0.0},
        {"rate": 0.0},
    ],
}


def by_hand(run: Run) -> bool:
    """The policy written as one custom sampler."""
    if run.error is not None:
        return True
    if isinstance(run.output, list) and any(c.failed for m in run.output for c in m.tool_invocations):
        return True
    if run.metadata.get("feedback") == "negative":
        return True
    return sample_point(run_key(run)) < 0.0  # checkout and the rest: rate 0


def median_us(fn: Callable[[Any], Any], items: Sequence[Any]) -> float:
    clock = time.perf_counter_ns
    out = []
    for item in items:
        start = clock()
        fn(item)
        out.append((clock() - start) / 1000)
    return statistics.median(out)


async def cheap(run: Run) -> float:
    return 1.0


def main() -> None:
    scorer = create_scorer(id="cheap").generate_score(cheap)
    items = [
        Run(
            run_id=f"r-{i}",
            input="Where is my order?",
            output="On its way.",
            entity="search",
            duration_ms=900.0,
        )
        for i in range(N)
    ]
    lock, queue = threading.Lock(), deque[Any]()

    def locked_append(item: Any) -> None:
        with lock:
            queue.append(item)

    setups = {"ratio 0.0": 0.0, "custom sampler (by hand)": by_hand, "rules (4, data form)": POLICY}
    results: dict[str, list[float]] = {"baseline: lock + deque.append": []}
    results.update({label: [] for label in setups})
    for _ in range(ROUNDS):
        results["baseline: lock + deque.append"].append(median_us(locked_append, items))
        for label, sampling in setups.items():
            engine = ScoringEngine(
                {"s": {"scorer": scorer, "sampling": sampling}},
                sinks=[],
                delivery=DeliveryOptions(dead_letter=DEAD_LETTER),
            )
            results[label].append(median_us(engine.submit, items))
            assert engine.stats().sampled_out == N
            engine.shutdown()
    base = statistics.median(results["baseline: lock + deque.append"])
    custom = statistics.median(results["custom sampler (by hand)"])
    for label, rounds in results.items():
        median = statistics.median(rounds)
        print(
            f"{label:<32} submit() median {median:5.2f} µs (rounds {', '.join(f'{r:.2f}' for r in rounds)})"
            f"  {median / base:4.1f}x baseline  {median / custom:4.2f}x custom"
        )


if __name__ == "__main__":
    main()
