"""Tracing overhead of ScoringSpanProcessor on a pydantic-ai agent: with it vs without it, in one run.

The agent is a real pydantic-ai ``Agent`` (``TestModel``, two tools: 2 model calls and 2 tool calls per
run) instrumented with its own OpenTelemetry support. Both sides trace every span to an in-memory
exporter through a ``SimpleSpanProcessor``; the scoring side adds ``ScoringSpanProcessor`` on a real
``ScoringEngine`` scoring every run with 5 code scorers into a counting sink. Each scoring block is
timed until the engine has scored and written its runs (``force_flush``), so background scoring counts.
"sampled out" samples every run out (nothing is built or scored: the processor's own cost on the hot
path). "baseline vs baseline" times the baseline against itself: this machine's noise.

Blocks alternate ABBA (baseline first in one pair, scoring first in the next). Each setup runs
``--rounds`` times on fresh agents; the line gives the median round (ratio of total times), the median
ratio over all block pairs and the ratio of process CPU time. Targets: <= 1.10 scoring every run,
<= 1.03 sampled out.

Run: ``uv run python benchmarks/bench_otel.py [--runs 600] [--block 20] [--rounds 3] [--only run_sync]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any, NamedTuple

from agentevals_otel import ScoringSpanProcessor
from bench_engine import CountingSink
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.test import TestModel

from agentevals import ScoringEngine, create_scorer
from agentevals.scorers import create_includes_scorer, create_levenshtein_scorer


def scorers(rate: float) -> dict[str, Any]:
    words = create_scorer(id="words").generate_score(
        lambda run, **_: min(1.0, len(run.output_text.split()) / 10)
    )
    tools = create_scorer(id="tools").generate_score(
        lambda run, **_: float(sum(len(m.tool_invocations) for m in run.output_messages) == 2)
    )
    no_error = create_scorer(id="no_error").generate_score(lambda run, **_: float(run.error is None))
    every = [create_includes_scorer(), create_levenshtein_scorer(), words, tools, no_error]
    return {s.id: {"scorer": s, "sampling": {"type": "ratio", "rate": rate}} for s in every}


class Side:
    """One side of the comparison: a traced agent, its exporter, and its scoring processor if any."""

    def __init__(self, rate: float | None) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider(shutdown_on_exit=False)
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.processor: ScoringSpanProcessor | None = None
        if rate is not None:
            self.processor = ScoringSpanProcessor(engine=ScoringEngine(scorers(rate), sinks=[CountingSink()]))
            self.provider.add_span_processor(self.processor)
        settings = InstrumentationSettings(tracer_provider=self.provider)
        self.agent: Agent[None, str] = Agent(
            TestModel(), name="weather", capabilities=[Instrumentation(settings=settings)]
        )

        @self.agent.tool_plain
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return f"sunny in {city}"

        @self.agent.tool_plain
        def get_time(city: str) -> str:
            """The time in a city."""
            return "noon"

    def block(self, start: int, count: int, use_async: bool) -> tuple[float, float]:
        """Run ``count`` invocations; wall and CPU seconds, until the runs are scored."""
        cpu, began = time.process_time(), time.perf_counter()
        if use_async:
            asyncio.run(self._arun(start, count))
        else:
            for i in range(start, start + count):
                self.agent.run_sync(f"Weather in city{i}?")
        if self.processor is not None:
            self.processor.force_flush(60_000)
        wall, cpu = time.perf_counter() - began, time.process_time() - cpu
        self.exporter.clear()
        return wall, cpu

    async def _arun(self, start: int, count: int) -> None:
        for i in range(start, start + count):
            await self.agent.run(f"Weather in city{i}?")

    def close(self) -> Any:
        stats = None if self.processor is None else self.processor.engine.stats()
        self.provider.shutdown()
        return stats


class Round(NamedTuple):
    base_ms: float
    scoring_ms: float
    block_ratios: list[float]
    cpu_ratio: float
    stats: Any

    @property
    def ratio(self) -> float:
        return self.scoring_ms / self.base_ms


def measure(runs: int, block: int, use_async: bool, rate: float | None) -> Round:
    """One round; ``rate=None`` is the control (the baseline against a second baseline)."""
    baseline, scoring = Side(None), Side(rate)
    warm = min(block, 20)
    baseline.block(0, warm, use_async)
    scoring.block(0, warm, use_async)
    times: list[list[float]] = [[], []]
    cpus = [0.0, 0.0]
    for pair, offset in enumerate(range(0, runs, block)):
        order = (0, 1) if pair % 2 == 0 else (1, 0)
        for side in order:
            wall, cpu = (baseline, scoring)[side].block(offset, block, use_async)
            times[side].append(wall)
            cpus[side] += cpu
    baseline.close()
    stats = scoring.close()
    count = len(times[0]) * block
    return Round(
        base_ms=sum(times[0]) / count * 1000,
        scoring_ms=sum(times[1]) / count * 1000,
        block_ratios=[s / b for s, b in zip(times[1], times[0], strict=True)],
        cpu_ratio=cpus[1] / cpus[0],
        stats=stats,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=600, help="invocations per setup and round")
    parser.add_argument("--block", type=int, default=20, help="invocations per alternating block")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per setup (median reported)")
    parser.add_argument("--only", default="", help="run only the setups whose label contains this")
    args = parser.parse_args()
    setups: list[tuple[str, bool, float | None]] = [
        ("run_sync", False, 1.0),
        ("run", True, 1.0),
        ("run_sync, sampled out", False, 0.0),
        ("run, sampled out", True, 0.0),
        ("run_sync, baseline vs baseline", False, None),
        ("run, baseline vs baseline", True, None),
    ]
    for label, use_async, rate in setups:
        if args.only not in label:
            continue
        rounds = sorted(
            (measure(args.runs, args.block, use_async, rate) for _ in range(args.rounds)),
            key=lambda r: r.ratio,
        )
        middle = rounds[len(rounds) // 2]
        pairs = statistics.median(x for r in rounds for x in r.block_ratios)
        cpu = statistics.median(r.cpu_ratio for r in rounds)
        stats = middle.stats
        scored = "" if stats is None else f" | scored {stats.scored} sampled out {stats.sampled_out}"
        print(
            f"{label:<31} baseline {middle.base_ms:5.2f} ms/run | with it {middle.scoring_ms:5.2f} ms/run"
            f" | ratio {middle.ratio:.3f} (rounds {' '.join(f'{r.ratio:.3f}' for r in rounds)};"
            f" median of block pairs {pairs:.3f}; CPU {cpu:.3f}){scored}",
            flush=True,
        )


if __name__ == "__main__":
    main()
