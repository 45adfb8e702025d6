"""What judge budgets and the circuit breaker cost (``ScoringEngine(budgets=..., breaker=...)``).

Run: ``uv run python benchmarks/bench_limits.py``. Two measurements, each against a baseline in the same
run (2 shared cores: rounds alternate ABBA and the medians are compared):

1. Live scoring of async code scorers (no judge): the default breaker (a gate scope set for every scorer
   call) vs ``breaker=None`` (no gate); wall time until 20,000 runs are scored.
2. One judge call through LiteLLM to the fake judge server on 127.0.0.1, under a gate with a budget and
   a breaker vs with none: the gate's admit + settle next to the call it guards.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentevals import Run, ScoreRecord, ScoringEngine, create_scorer
from agentevals._scoring._judge._scope import active_limits
from agentevals._scoring._limits._gate import EngineLimits
from agentevals.engine import Breaker, Budget, DeliveryOptions, ExitOptions, QueueOptions
from agentevals.testing import FakeJudgeServer

RUNS = 20_000
ROUNDS = 8
JUDGE_CALLS = 200
DEAD_LETTER = Path(tempfile.gettempdir()) / "agentevals-bench-limits-deadletter.jsonl"


class CountingSink:
    name = "counting"

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        pass

    async def close(self) -> None:
        pass


async def _score(run: Run) -> float:
    return float(bool(run.output_text))


SCORER = create_scorer(id="async-code").generate_score(_score)


def engine_seconds(**options: Any) -> float:
    engine = ScoringEngine(
        [SCORER],
        sinks=[CountingSink()],
        queue=QueueOptions(size=RUNS),
        delivery=DeliveryOptions(dead_letter=DEAD_LETTER),
        exit=ExitOptions(handle_sigterm=False),
        **options,
    )
    runs = [Run(input="q", output="a") for _ in range(RUNS)]
    started = time.perf_counter()
    for run in runs:
        engine.submit(run)
    assert engine.flush(timeout=120)
    elapsed = time.perf_counter() - started
    engine.shutdown()
    return elapsed


async def judge_ms(server: FakeJudgeServer, gate: EngineLimits | None) -> float:
    judge = server.judge()
    if gate is not None:
        active_limits.set(gate.scope("judged", None))
    started = time.perf_counter()
    for _ in range(JUDGE_CALLS):
        await judge.complete("Grade this.")
    return (time.perf_counter() - started) * 1000 / JUDGE_CALLS


def main() -> None:
    timings: dict[str, list[float]] = {"breaker=None": [], "default breaker": []}
    for i in range(ROUNDS):
        order = ["breaker=None", "default breaker"]
        for label in order if i % 2 == 0 else order[::-1]:
            options: dict[str, Any] = {"breaker": None} if label == "breaker=None" else {}
            timings[label].append(engine_seconds(**options))
    base, gated = (statistics.median(timings[k]) for k in ("breaker=None", "default breaker"))
    print(
        f"engine, {RUNS} runs x 1 async code scorer: breaker=None {base:.3f} s, default breaker {gated:.3f} s"
    )
    rounds = ", ".join(f"{g / b:.3f}" for b, g in zip(*timings.values(), strict=True))
    print(f"  ratio {gated / base:.3f} (rounds {rounds})")

    with FakeJudgeServer(responder=lambda _: "fine") as server:
        calls: dict[str, list[float]] = {"no gate": [], "gate": []}
        asyncio.run(judge_ms(server, None))  # warm-up: LiteLLM's import and first connection
        for i in range(ROUNDS):
            order = ["no gate", "gate"]
            for label in order if i % 2 == 0 else order[::-1]:
                gate = EngineLimits([Budget(calls=10**9, per="day")], Breaker()) if label == "gate" else None
                calls[label].append(asyncio.run(judge_ms(server, gate)))
    bare, limited = (statistics.median(calls[k]) for k in ("no gate", "gate"))
    print(f"judge call via LiteLLM to the fake server: no gate {bare:.3f} ms, gate {limited:.3f} ms")
    print(f"  ratio {limited / bare:.3f}")


if __name__ == "__main__":
    main()
