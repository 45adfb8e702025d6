"""Capture overhead on the agent's hot path: ScorerCallbackHandler vs a no-op callback handler.

The agent is a real ``create_agent`` agent (scripted chat model, two tools: 2 model calls and 2 tool
calls per run). The handler scores every run (sampling 1.0) with 5 code scorers on a real
``ScoringEngine``; the scoring runs in the background while the agent keeps going, so the ratio
includes capture plus any contention from background scoring. Target: ratio <= 1.10.

The handler only records references on the agent's thread; the engine builds the ``Run`` and scores
it in batches on its own thread. On this CPU-bound fake agent (no model latency to hide behind) that
background work competes for the GIL, so it counts: each handler block is timed until the engine has
also scored and written every run of the block (its ``flush``). Records go to a sink that counts them
("SQLite sink": to the embedded default store instead). "sampled out" samples every run out: nothing is
built or scored, so it is the handler's own cost on the hot path. "no-op vs no-op" times the baseline
against itself: how far from 1.00 this machine's noise alone moves a ratio.

Blocks of runs alternate between the two setups in the order ABBA (baseline first in one pair of
blocks, handler first in the next), so drift and the position in a pair hit both alike: with a plain
ABAB order the second block of every pair ran measurably faster, flattering the handler by up to 4%.
Each setup runs ``--rounds`` times on fresh agents; the line gives the median round (ratio of total
times), the median ratio over all block pairs, the ratio of process CPU time, and the time spent in
garbage collection on each side (all rounds, any thread) with its count of full collections.

Run: ``uv run python benchmarks/bench_capture.py [--runs 1000] [--block 20] [--rounds 3] [--only ainvoke]``
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from agentevals_langchain import ScorerCallbackHandler
from agentevals_langchain.testing import ScriptedChatModel, tool_call
from bench_engine import CountingSink
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool

from agentevals import ScoringEngine, create_scorer
from agentevals.scorers import create_includes_scorer, create_levenshtein_scorer
from agentevals.sinks import SQLiteSink


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def reply(messages: list[BaseMessage]) -> AIMessage | str:
    last = messages[-1]
    if isinstance(last, HumanMessage):
        calls = [tool_call("get_weather", {"city": last.text}), tool_call("add", {"a": 2, "b": 3})]
        return AIMessage(content="", tool_calls=calls)
    return f"It is {messages[-2].text} and 2+3={last.text}."


class NoOp(BaseCallbackHandler):
    """The baseline: a callback handler that receives every event and does nothing."""

    run_inline = True


def scorers() -> list[Any]:
    words = create_scorer(id="words").generate_score(
        lambda run, **_: min(1.0, len(run.output_text.split()) / 10)
    )
    tools = create_scorer(id="tools").generate_score(
        lambda run, **_: float(sum(len(m.tool_invocations) for m in run.output_messages) == 2)
    )
    no_error = create_scorer(id="no_error").generate_score(lambda run, **_: float(run.error is None))
    return [create_includes_scorer(), create_levenshtein_scorer(), words, tools, no_error]


def run_block(agent: Any, handler: Any, start: int, count: int) -> None:
    for i in range(start, start + count):
        agent.invoke(
            {"messages": [{"role": "user", "content": f"city{i}"}]},
            config={"callbacks": [handler], "metadata": {"ground_truth": "sunny"}},
        )


async def arun_block(agent: Any, handler: Any, start: int, count: int) -> None:
    for i in range(start, start + count):
        await agent.ainvoke(
            {"messages": [{"role": "user", "content": f"city{i}"}]},
            config={"callbacks": [handler], "metadata": {"ground_truth": "sunny"}},
        )


class NoOpControl(NoOp):
    """The baseline again, as the other side of the no-op vs no-op control."""


def make_sink(kind: str, folder: Path) -> Any:
    if kind == "sqlite":
        return SQLiteSink(folder / f"bench-{time.perf_counter_ns()}.db")
    return CountingSink()


class GcTally:
    """Time spent in garbage collection (any thread), and full collections, per side of the comparison."""

    def __init__(self) -> None:
        self.side = 0  # 0: baseline blocks, 1: handler blocks
        self.seconds = [0.0, 0.0]
        self.full = [0, 0]
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        self.seconds[self.side] += time.perf_counter() - self._started
        self.full[self.side] += info["generation"] == 2

    def __enter__(self) -> GcTally:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


def thread_clocks() -> dict[str, tuple[float, int, int]]:
    """CPU seconds and voluntary / involuntary context switches of every thread but this one, by name
    (Linux: the thread's CPU clock and ``/proc/self/task/<tid>/status``)."""
    clocks: dict[str, tuple[float, int, int]] = {}
    for thread in threading.enumerate():
        if thread is threading.current_thread() or thread.ident is None or thread.native_id is None:
            continue
        try:
            cpu = time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
            status = Path(f"/proc/self/task/{thread.native_id}/status").read_text()
        except (OSError, ProcessLookupError):
            continue  # the thread ended meanwhile
        switches = dict(line.split(":\t") for line in status.splitlines() if "ctxt_switches" in line)
        clocks[thread.name] = (
            cpu,
            int(switches["voluntary_ctxt_switches"]),
            int(switches["nonvoluntary_ctxt_switches"]),
        )
    return clocks


class ThreadTally:
    """Per side of the comparison: the agent's loop alone (wall and the agent thread's CPU, without the
    flush), and each other thread's CPU and context switches (a voluntary switch is a wait: a wake-up)."""

    def __init__(self) -> None:
        self.loop_wall = [0.0, 0.0]
        self.loop_cpu = [0.0, 0.0]
        self.others: list[dict[str, list[float]]] = [{}, {}]

    def add_others(self, side: int, before: dict[str, tuple[float, int, int]]) -> None:
        for name, (cpu, vol, invol) in thread_clocks().items():
            was = before.get(name, (0.0, 0, 0))
            total = self.others[side].setdefault(name, [0.0, 0, 0])
            total[0] += cpu - was[0]
            total[1] += vol - was[1]
            total[2] += invol - was[2]


class Round(NamedTuple):
    base_ms: float  # per run
    handler_ms: float  # per run
    block_ratios: list[float]
    cpu_ratio: float
    gc: GcTally
    stats: Any
    threads: ThreadTally

    @property
    def ratio(self) -> float:
        return self.handler_ms / self.base_ms

    @property
    def loop_ratio(self) -> float:
        """The agent's loop alone (wall, without the handler block's flush), handler / baseline."""
        return self.threads.loop_wall[1] / self.threads.loop_wall[0]

    @property
    def thread_cpu_ratio(self) -> float:
        """The agent's thread's CPU during its loop, handler / baseline."""
        return self.threads.loop_cpu[1] / self.threads.loop_cpu[0]


def thread_summary(rounds: list[Round], block: int) -> str:
    """The agent's loop alone (wall and its thread's CPU, medians of the rounds' ratios) and, for the
    handler's blocks, each busy background thread's CPU per run and wake-ups (voluntary switches) per
    block, all rounds."""
    loop = statistics.median(r.loop_ratio for r in rounds)
    own = statistics.median(r.thread_cpu_ratio for r in rounds)
    runs = sum(len(r.block_ratios) for r in rounds) * block  # per side
    blocks = runs / block
    names = sorted({name for r in rounds for name in r.threads.others[1]})
    parts = []
    for name in names:
        cpu, vol, invol = (
            sum(r.threads.others[1].get(name, [0.0, 0, 0])[i] for r in rounds) for i in range(3)
        )
        if cpu * 1e6 / runs >= 1.0:
            parts.append(
                f"{name} {cpu * 1e6 / runs:.0f} us/run, {vol / blocks:.1f}+{invol / blocks:.1f} sw/block"
            )
    return f"agent loop {loop:.3f} (its thread's CPU {own:.3f}) | {'; '.join(parts) or 'no busy thread'}"


def measure(
    runs: int,
    block: int,
    use_async: bool,
    rate: float | None,
    sink: Any,
    make_engine: Callable[[dict[str, Any]], ScoringEngine] | None = None,
) -> Round:
    """One round; ``rate=None`` is the control: the no-op baseline against a second no-op handler.
    ``make_engine(scorers)`` makes the handler's engine (default: scoring here into ``sink``)."""
    agent = create_agent(
        ScriptedChatModel(respond=reply), tools=[get_weather, add], system_prompt="Be brief."
    )
    engine = None
    handler: Any = NoOpControl()
    if rate is not None:
        sampled = {s.id: {"scorer": s, "sampling": {"type": "ratio", "rate": rate}} for s in scorers()}
        engine = make_engine(sampled) if make_engine else ScoringEngine(sampled, sinks=[sink])
        handler = ScorerCallbackHandler(engine=engine)
    baseline = NoOp()

    threads = ThreadTally()

    def timed(h: Any, start: int, count: int, side: int = -1) -> tuple[float, float]:
        others = thread_clocks() if side >= 0 else {}
        cpu, began = time.process_time(), time.perf_counter()
        own = time.thread_time()
        if use_async:
            asyncio.run(arun_block(agent, h, start, count))
        else:
            run_block(agent, h, start, count)
        looped, own = time.perf_counter(), time.thread_time() - own
        if h is handler and engine is not None:
            engine.flush(60)  # what the background has not finished yet counts against the handler
        wall, cpu = time.perf_counter() - began, time.process_time() - cpu
        if side >= 0:
            threads.loop_wall[side] += looped - began
            threads.loop_cpu[side] += own
            threads.add_others(side, others)
        return wall, cpu

    warm = min(block, 20)
    timed(baseline, 0, warm)
    timed(handler, 0, warm)
    base_times: list[float] = []
    handler_times: list[float] = []
    base_cpu = handler_cpu = 0.0
    with GcTally() as collections:
        for pair, offset in enumerate(range(0, runs, block)):
            order = (baseline, handler) if pair % 2 == 0 else (handler, baseline)
            for h in order:
                collections.side = int(h is handler)
                wall, cpu = timed(h, offset, block, collections.side)
                if h is baseline:
                    base_times.append(wall)
                    base_cpu += cpu
                else:
                    handler_times.append(wall)
                    handler_cpu += cpu
    stats = None
    if engine is not None:
        stats = engine.stats()
        engine.shutdown(30)
    count = len(base_times) * block
    return Round(
        base_ms=sum(base_times) / count * 1000,
        handler_ms=sum(handler_times) / count * 1000,
        block_ratios=[h / b for h, b in zip(handler_times, base_times, strict=True)],
        cpu_ratio=handler_cpu / base_cpu,
        gc=collections,
        stats=stats,
        threads=threads,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="invocations per setup and round")
    parser.add_argument("--block", type=int, default=20, help="invocations per alternating block")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per setup (median reported)")
    parser.add_argument("--only", default="", help="run only the setups whose label contains this")
    args = parser.parse_args()
    setups: list[tuple[str, bool, float | None, str]] = [
        ("invoke", False, 1.0, "count"),
        ("ainvoke", True, 1.0, "count"),
        ("invoke, SQLite sink", False, 1.0, "sqlite"),
        ("invoke, sampled out", False, 0.0, "count"),
        ("ainvoke, sampled out", True, 0.0, "count"),
        ("invoke, no-op vs no-op", False, None, "count"),
        ("ainvoke, no-op vs no-op", True, None, "count"),
    ]
    folder = Path(tempfile.mkdtemp(prefix="agentevals-bench-"))
    for label, use_async, rate, sink_kind in setups:
        if args.only not in label:
            continue
        rounds = [
            measure(args.runs, args.block, use_async, rate, make_sink(sink_kind, folder))
            for _ in range(args.rounds)
        ]
        rounds.sort(key=lambda r: r.ratio)
        middle = rounds[len(rounds) // 2]
        pairs = statistics.median(x for r in rounds for x in r.block_ratios)
        cpu = statistics.median(r.cpu_ratio for r in rounds)
        stats = middle.stats
        scored = "" if stats is None else f" | scored {stats.scored} sampled out {stats.sampled_out}"
        base_gc, handler_gc = (sum(r.gc.seconds[side] for r in rounds) * 1000 for side in (0, 1))
        count = sum(len(r.block_ratios) for r in rounds) * args.block  # runs timed per side
        print(
            f"{label:<24} no-op {middle.base_ms:5.2f} ms/run | with handler {middle.handler_ms:5.2f} ms/run"
            f" | ratio {middle.ratio:.3f} (rounds {' '.join(f'{r.ratio:.3f}' for r in rounds)};"
            f" median of block pairs {pairs:.3f}; CPU {cpu:.3f}) | GC {base_gc / count:.3f} ->"
            f" {handler_gc / count:.3f} ms/run, full collections {sum(r.gc.full[0] for r in rounds)} ->"
            f" {sum(r.gc.full[1] for r in rounds)}{scored}\n    {thread_summary(rounds, args.block)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
