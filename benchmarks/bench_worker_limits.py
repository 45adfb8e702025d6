"""What a scoring worker's limits cost per judge request: the circuit breaker (on by default), a budget
kept in Redis (two script calls per request) and the Redis judge caps (two calls per cap per request).

Run (one heavy thing at a time on a shared machine)::

    flock /tmp/agentevals-heavy.lock uv run python benchmarks/bench_worker_limits.py [--runs 200]

Each round scores ``--runs`` runs of one judged scorer (one request each to ``FakeJudgeServer``, no
latency, in this process) with a worker's ``MessageScorer`` (no broker: the gate is what differs) in
every configuration, in ABBA order; prints the median wall and CPU time (of this process) of each and
its ratio to the worker with no limits at all (``--no-breaker``, no budget, no cap) in the same rounds.
Then, alone, what one request's Redis work costs: a shared budget's reserve + settle, and the caps'
take + free (a global and a per-model cap), 2,000 times each.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
import uuid
from typing import Any

from pydantic import BaseModel

from agentevals import Run, create_scorer
from agentevals._engine._config import normalize_scorers
from agentevals._engine._forward._codec import batch_text, run_entry_text
from agentevals._worker._group_write import GroupWriter
from agentevals._worker._limits import worker_gate
from agentevals._worker._score_message import MessageScorer
from agentevals._worker._setup import WorkerConfig
from agentevals.engine import Budget
from agentevals.sinks import MemorySink
from agentevals.steps import PromptStep
from agentevals.testing import FakeJudge, FakeJudgeServer, Reply

REDIS = "redis://127.0.0.1:6379/0"
MODEL = "openai/gpt-4o-mini"


class Verdict(BaseModel):
    correct: bool


def scorers(url: str) -> Any:
    judge = FakeJudge(model=MODEL, api_base=url, api_key="fake-key", timeout=30.0, max_concurrency=32)
    step = PromptStep(
        description="verdict",
        create_prompt=lambda run, **_: f"Is {run.output_text!r} right?",
        output_schema=Verdict,
    )
    scorer = create_scorer(id="verdict", judge=judge).analyze(step)
    return normalize_scorers(
        [scorer.generate_score(lambda results, **_: float(results.analyze_step_result.correct))]
    )


def configs(queue: str) -> dict[str, WorkerConfig]:
    base: dict[str, Any] = {"broker": REDIS, "scorers": "-", "sinks": ("-",), "queue": queue}
    redis: dict[str, Any] = {**base, "rate_limit_backend": REDIS}
    budget = ("calls=1000000000/day",)
    caps: dict[str, Any] = {"judge_concurrency": 64, "model_concurrency": {MODEL: 64}}
    return {
        "no limits": WorkerConfig(**base, breaker=False),
        "breaker": WorkerConfig(**base),
        "breaker + Redis budget": WorkerConfig(**redis, budgets=budget),
        "Redis caps": WorkerConfig(**redis, **caps, breaker=False),
        "breaker + Redis budget + caps": WorkerConfig(**redis, **caps, budgets=budget),
    }


async def one_round(scorer: MessageScorer, n: int) -> tuple[float, float]:
    """Wall and CPU seconds (this process: worker and fake server) to score ``n`` runs."""
    stamp = uuid.uuid4().hex[:8]
    runs = [Run(run_id=f"b-{stamp}-{i}", input=f"question {i}", output=f"answer {i}") for i in range(n)]
    message = batch_text([run_entry_text(run, ["verdict"], entity="bench") for run in runs])
    started, cpu = time.perf_counter(), time.process_time()
    records = await scorer.handle(message)
    elapsed = time.perf_counter() - started, time.process_time() - cpu
    assert [r.outcome for r in records] == ["scored"] * n, {r.outcome for r in records}
    return elapsed


async def redis_costs(n: int = 2000) -> None:
    """Wall and CPU microseconds of one request's Redis work for a shared budget and for the caps."""
    import redis

    from agentevals._scoring._limits._shared_budget import SharedBudgetMeter
    from agentevals._worker._judge_gate import JudgeCaps

    client = redis.Redis.from_url(REDIS)
    prefix = f"bench-limits-{uuid.uuid4().hex[:8]}"
    meter = SharedBudgetMeter(Budget(calls=10**9, per="day"), client, prefix)
    caps = JudgeCaps(client, 64, {MODEL: 64}, prefix=f":{prefix}")

    def budget() -> None:
        hold = meter.reserve()
        assert hold is not None
        meter.settle(hold, 1.0)

    async def cap() -> None:
        (await caps.hold(MODEL))()

    budget()
    await cap()
    for label, one in (("budget reserve + settle", budget), ("caps take + free", cap)):
        started, cpu = time.perf_counter(), time.process_time()
        for _ in range(n):
            done = one()
            if done is not None:
                await done
        wall, used = (time.perf_counter() - started) / n, (time.process_time() - cpu) / n
        print(f"  {label:32s} {wall * 1e6:5.0f} us wall  {used * 1e6:5.0f} us CPU per request")
    for key in client.scan_iter(f"*{prefix}*"):
        client.delete(key)
    client.close()


async def main(runs: int, rounds: int) -> None:
    with FakeJudgeServer(responder=lambda _: Reply.json({"correct": True})) as server:
        entries = scorers(server.url)
        queue = f"bench-limits-{uuid.uuid4().hex[:8]}"
        made = {
            name: MessageScorer(entries, GroupWriter([MemorySink()]), gate=worker_gate(config, entries))
            for name, config in configs(queue).items()
        }
        for scorer in made.values():  # warm-up: connections, LiteLLM, Redis scripts
            await one_round(scorer, 32)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in made}
        order = list(made)
        for i in range(rounds):
            for name in order if i % 2 == 0 else reversed(order):
                times[name].append(await one_round(made[name], runs))
    wall = {name: statistics.median(t[0] for t in values) for name, values in times.items()}
    cpu = {name: statistics.median(t[1] for t in values) for name, values in times.items()}
    print(f"{runs} judged runs a round, {rounds} rounds (ABBA); medians and ratios to no limits:")
    print(f"  {'':32s} {'wall':>8s} {'ratio':>6s} {'CPU':>8s} {'ratio':>6s}")
    for name in times:
        print(
            f"  {name:32s} {wall[name]:7.3f}s {wall[name] / wall['no limits']:6.3f} "
            f"{cpu[name]:7.3f}s {cpu[name] / cpu['no limits']:6.3f}"
        )
    print("one request's Redis work, alone:")
    await redis_costs()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=8)
    options = parser.parse_args()
    asyncio.run(main(options.runs, options.rounds))
