"""Capture overhead with remote scoring: ScorerCallbackHandler on an engine with ``broker=`` (the runs
are published to RabbitMQ for ``agentevals worker`` to score) vs a no-op callback handler.

The agent and the method are ``bench_capture.py``'s (real ``create_agent`` agent on a scripted model,
ABBA blocks, median of ``--rounds``): here the engine has 5 code scorers and 1 LLM-judged scorer (on
a fake judge; it never runs in this process) sampling every run, and each handler block is timed
until the broker confirmed every run of the block (the engine's ``flush``), so building, encoding and
publishing the runs count against the handler. "spool" also writes each run to a SQLite spool first.
"in process" is the comparison: the same 6 scorers scored by the engine in this process (the judge
answers at once from the fake server, so only its client's CPU counts). "no-op vs no-op" is the noise
control. Target: ratio <= 1.03 for ``invoke`` and ``ainvoke`` with the broker.

Run (one heavy thing at a time)::

    flock /tmp/agentevals-heavy.lock uv run python benchmarks/bench_capture_remote.py [--broker URL]
        [--runs 1000] [--block 20] [--rounds 3] [--only LABEL] [--skip LABEL]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import uuid
from pathlib import Path
from typing import Any

from bench_capture import Round, measure, thread_summary
from bench_engine import CountingSink
from pydantic import BaseModel

from agentevals import ScoringEngine, create_scorer
from agentevals.engine import BrokerOptions
from agentevals.steps import PromptStep
from agentevals.testing import FakeJudge, FakeJudgeServer

#: The judge's address in the broker setups, where the workers (not this process) would call it.
_NEVER_CALLED = "http://127.0.0.1:9/v1"


class Verdict(BaseModel):
    correct: bool


def judged(api_base: str) -> Any:
    """One LLM-judged scorer (its judge is never called here: the workers run it)."""
    judge = FakeJudge(model="openai/gpt-4o-mini", api_base=api_base, api_key="fake-key")
    return (
        create_scorer(id="verdict", judge=judge)
        .analyze(
            PromptStep(
                description="verdict",
                create_prompt=lambda run, **_: f"Is {run.output_text!r} right?",
                output_schema=Verdict,
            )
        )
        .generate_score(lambda results, **_: 1.0 if results.analyze_step_result.correct else 0.0)
    )


def delete_queue(broker: str, queue: str) -> None:
    """Remove what the benchmark published (no worker consumes it)."""
    if broker.startswith("redis"):
        import redis

        client = redis.Redis.from_url(broker)
        keys = client.keys(f"dramatiq:{queue}*")
        if keys:
            client.delete(*keys)
        client.close()
        return
    import pika

    conn = pika.BlockingConnection(pika.URLParameters(broker))
    try:
        channel = conn.channel()
        for name in (queue, f"{queue}.DQ", f"{queue}.XQ"):
            channel.queue_delete(name)
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--broker", default="amqp://guest:guest@127.0.0.1:5672/", help="RabbitMQ (or redis://) URL"
    )
    parser.add_argument("--runs", type=int, default=1000, help="invocations per setup and round")
    parser.add_argument("--block", type=int, default=20, help="invocations per alternating block")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per setup (median reported)")
    parser.add_argument("--only", default="", help="run only the setups whose label contains this")
    parser.add_argument("--skip", default="", help="skip the setups whose label contains this")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="agentevals-bench-"))
    setups: list[tuple[str, bool, bool | str | None]] = [
        ("invoke, broker", False, False),
        ("ainvoke, broker", True, False),
        ("invoke, broker + spool", False, True),
        ("ainvoke, broker + spool", True, True),
        ("invoke, in process", False, "local"),
        ("ainvoke, in process", True, "local"),
        ("invoke, no-op vs no-op", False, None),
        ("ainvoke, no-op vs no-op", True, None),
    ]
    # The fake judge serves only the in-process setups: with a broker the judge never runs here, and its
    # server thread (polling every 20 ms) would take the GIL from the agent on both sides of the ratio.
    server = FakeJudgeServer(responder=lambda request: {"correct": True})
    started = False
    with contextlib.ExitStack() as stack:
        for label, use_async, spool in setups:
            if args.only not in label or (args.skip and args.skip in label):
                continue
            queue = f"agentevals_bench_{uuid.uuid4().hex[:8]}"
            if spool == "local" and not started:
                stack.enter_context(server)
                started = True
            judge_url = server.url if spool == "local" else _NEVER_CALLED

            def make_engine(
                scorers: dict[str, Any], spool: Any = spool, queue: str = queue, judge_url: str = judge_url
            ) -> Any:
                scorers = {**scorers, "verdict": judged(judge_url)}
                if spool == "local":
                    return ScoringEngine(scorers, sinks=[CountingSink()])
                path = folder / f"spool-{uuid.uuid4().hex[:8]}.db" if spool else None
                return ScoringEngine(scorers, broker=BrokerOptions(args.broker, queue=queue, spool=path))

            try:
                rounds: list[Round] = [
                    measure(
                        args.runs,
                        args.block,
                        use_async,
                        None if spool is None else 1.0,
                        CountingSink(),
                        make_engine=make_engine,
                    )
                    for _ in range(args.rounds)
                ]
            finally:
                delete_queue(args.broker, queue)
            rounds.sort(key=lambda r: r.ratio)
            middle = rounds[len(rounds) // 2]
            pairs = statistics.median(x for r in rounds for x in r.block_ratios)
            cpu = statistics.median(r.cpu_ratio for r in rounds)
            stats = middle.stats
            base_gc, handler_gc = (sum(r.gc.seconds[side] for r in rounds) * 1000 for side in (0, 1))
            count = sum(len(r.block_ratios) for r in rounds) * args.block  # runs timed per side
            sent = "" if stats is None else f" | published {stats.published} of {stats.accepted}"
            if stats is not None and spool == "local":
                sent = f" | scored {stats.scored} failed {stats.failed}"
            print(
                f"{label:<24} no-op {middle.base_ms:5.2f} ms/run"
                f" | with handler {middle.handler_ms:5.2f} ms/run"
                f" | ratio {middle.ratio:.3f} (rounds {' '.join(f'{r.ratio:.3f}' for r in rounds)};"
                f" median of block pairs {pairs:.3f}; CPU {cpu:.3f}){sent}"
                f" | GC {base_gc / count:.3f} -> {handler_gc / count:.3f} ms/run"
                f"\n    {thread_summary(rounds, args.block)}",
                flush=True,
            )


if __name__ == "__main__":
    main()
