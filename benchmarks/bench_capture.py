"""Capture overhead on the agent's hot path: ScorerCallbackHandler vs a no-op callback handler.

The agent is a real ``create_agent`` agent (scripted chat model, two tools: 2 model calls and 2 tool
calls per run). The handler scores every run (sampling 1.0) with 5 code scorers on a real
``ScoringEngine``; the scoring runs in the background while the agent keeps going, so the ratio
includes capture plus any contention from background scoring. Blocks of runs alternate between the
two setups so machine-load drift hits both alike. Target: ratio <= 1.10.

The handler only records references on the agent's thread; the engine builds the ``Run`` and scores
it in batches on its own thread. On this CPU-bound fake agent (no model latency to hide behind) that
background work competes for the GIL, so it counts: each handler block is timed until the engine has
also scored and written every run of the block (its ``flush``). Records go to a sink that counts them
("SQLite sink": to the embedded default store instead). "sampled out" samples every run out: nothing is
built or scored, so it is the handler's own cost on the hot path. "CPU" compares process CPU time
(agent threads plus the engine's).

Run: ``uv run python benchmarks/bench_capture.py [--runs 1000] [--block 50]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from agentevals_langchain import ScorerCallbackHandler
from agentevals_langchain.testing import ScriptedChatModel, tool_call
from bench_engine import CountingSink
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool

from agentevals import ScoringEngine, create_scorer
from agentevals.scorers import includes, levenshtein
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
    return [includes, levenshtein, words, tools, no_error]


def time_block(agent: Any, handler: Any, start: int, count: int) -> float:
    began = time.perf_counter()
    for i in range(start, start + count):
        agent.invoke(
            {"messages": [{"role": "user", "content": f"city{i}"}]},
            config={"callbacks": [handler], "metadata": {"ground_truth": "sunny"}},
        )
    return time.perf_counter() - began


async def atime_block(agent: Any, handler: Any, start: int, count: int) -> float:
    began = time.perf_counter()
    for i in range(start, start + count):
        await agent.ainvoke(
            {"messages": [{"role": "user", "content": f"city{i}"}]},
            config={"callbacks": [handler], "metadata": {"ground_truth": "sunny"}},
        )
    return time.perf_counter() - began


def make_sink(kind: str, folder: Path) -> Any:
    if kind == "sqlite":
        return SQLiteSink(folder / f"bench-{time.perf_counter_ns()}.db")
    return CountingSink()


def measure(
    runs: int, block: int, use_async: bool, rate: float, sink: Any
) -> tuple[float, float, float, float, Any]:
    agent = create_agent(
        ScriptedChatModel(respond=reply), tools=[get_weather, add], system_prompt="Be brief."
    )
    sampled = {s.id: {"scorer": s, "sampling": {"type": "ratio", "rate": rate}} for s in scorers()}
    engine = ScoringEngine(sampled, sinks=[sink])
    handler = ScorerCallbackHandler(engine=engine)
    baseline = NoOp()
    warm = min(block, 20)

    def timed(h: Any, start: int, count: int) -> float:
        if use_async:
            return asyncio.run(atime_block(agent, h, start, count))
        return time_block(agent, h, start, count)

    timed(baseline, 0, warm)
    timed(handler, 0, warm)
    engine.flush(60)
    base_times: list[float] = []
    handler_times: list[float] = []
    base_cpu = handler_cpu = 0.0
    for offset in range(0, runs, block):
        cpu = time.process_time()
        base_times.append(timed(baseline, offset, block))
        base_cpu += time.process_time() - cpu
        cpu, began = time.process_time(), time.perf_counter()
        timed(handler, offset, block)
        engine.flush(60)  # what the background has not finished yet counts against the handler
        handler_times.append(time.perf_counter() - began)
        handler_cpu += time.process_time() - cpu
    stats = engine.stats()
    engine.shutdown(30)
    base, with_handler = sum(base_times), sum(handler_times)
    per_run_base = base / (len(base_times) * block) * 1000
    per_run_handler = with_handler / (len(handler_times) * block) * 1000
    block_ratio = statistics.median(h / b for h, b in zip(handler_times, base_times, strict=True))
    return per_run_base, per_run_handler, block_ratio, handler_cpu / base_cpu, stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="invocations per setup (default 1000)")
    parser.add_argument("--block", type=int, default=50, help="invocations per alternating block")
    args = parser.parse_args()
    setups = [
        ("invoke", False, 1.0, "count"),
        ("ainvoke", True, 1.0, "count"),
        ("invoke, SQLite sink", False, 1.0, "sqlite"),
        ("invoke, sampled out", False, 0.0, "count"),
    ]
    folder = Path(tempfile.mkdtemp(prefix="agentevals-bench-"))
    for label, use_async, rate, sink_kind in setups:
        sink = make_sink(sink_kind, folder)
        base, handler, median_ratio, cpu_ratio, stats = measure(args.runs, args.block, use_async, rate, sink)
        scored = f"scored {stats.scored} failed {stats.failed} sampled out {stats.sampled_out}"
        print(
            f"{label:<20} no-op {base:6.2f} ms/run | ScorerCallbackHandler {handler:6.2f} ms/run | "
            f"ratio {handler / base:.3f} (median of blocks {median_ratio:.3f}, "
            f"CPU {cpu_ratio:.3f}) | {scored}"
        )


if __name__ == "__main__":
    main()
