"""Scorers and runs shared by the engine tests."""

from __future__ import annotations

import asyncio
import threading

from agentevals import Run, Scorer, ScoringEngine, create_scorer
from agentevals.engine import EngineStats
from agentevals.sinks import RetryPolicy

FAST_RETRY = RetryPolicy(attempts=5, initial=0.005, max_wait=0.02)


def length_scorer(id: str = "short") -> Scorer:
    return create_scorer(id=id).generate_score(lambda run, **_: float(len(run.output_text) < 20))


def runs(n: int, prefix: str = "run") -> list[Run]:
    return [Run(run_id=f"{prefix}-{i}", input=f"question {i}", output=f"answer {i}") for i in range(n)]


def gated_scorer(gate: threading.Event, id: str = "gated") -> Scorer:
    """A scorer that waits (without blocking the loop) until ``gate`` is set."""

    async def score(run: Run) -> float:
        while not gate.is_set():
            await asyncio.sleep(0.005)
        return 1.0

    return create_scorer(id=id).generate_score(score)


def accounted(engine: ScoringEngine, label: str = "") -> EngineStats:
    """The engine's stats, after checking that every run and record is accounted for; printed (-s)."""
    stats = engine.stats()
    counts = {k: v for k, v in vars(stats).items() if not k.startswith("latency") and v}
    print(f"{label or 'engine'}: {counts}")
    assert stats.unbalanced() == [], stats.unbalanced()
    assert stats.queued == stats.scoring == stats.buffered == 0
    return stats
