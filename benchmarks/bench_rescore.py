"""``rescore`` of stored runs against scoring the same runs in memory.

Run: ``uv run python benchmarks/bench_rescore.py [--runs 10000] [--rounds 3] [--scorers fast|mixed]``.
Target (issue 16): a re-score of 10,000 stored runs with 5 code scorers into the same SQLite store runs
at >= 80% of the in-memory rate.

The store is a real ``SQLiteSink`` file: each run (a ~1 kB transcript: a user message, an assistant answer,
a ground truth) stored once with the record of a "seed" scorer. Per round:

- **in memory** (the baseline): the same 10,000 ``Run`` objects, read from the store once before the
  rounds, scored by the same 5 scorers with ``await scorer.score(run)`` back to back on one event loop,
  the records kept in a list (no reading, no writing: what ``run_evals`` does per item, minus the target);
- **rescore**: ``arescore(path, scorers, force=True, progress=False)`` on a fresh copy of the store: reads
  the runs back, scores every (run, scorer) pair and writes the 50,000 records into the store.

Rates are (run, scorer) pairs per second; the ratio is rescore / in memory of the same round, and the
median of the rounds is reported. Both are measured in the same process, one after the other. The CPU
time of each (``time.process_time``: every thread) is printed too: on a machine shared with other work
the wall-clock ratio swings, the CPU ratio much less.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from agentevals import Run, Scorer, create_scorer
from agentevals._evals._rescore import arescore
from agentevals._store._store import open_store
from agentevals.scorers import (
    create_completeness_scorer,
    create_content_similarity_scorer,
    create_exact_match_scorer,
    create_includes_scorer,
    create_json_match_scorer,
    create_keyword_coverage_scorer,
    create_levenshtein_scorer,
    create_regex_scorer,
    create_textual_difference_scorer,
)
from agentevals.sinks import SQLiteSink

QUESTION = (
    "Our customer support team handled a record number of tickets last quarter. Please explain how the "
    "average response time changed, which product areas generated the most complaints, and whether the "
    "new chatbot reduced the load on human agents. Keep it short. Ticket batch {i}."
)
ANSWER = (
    "The average first response time fell from 9.5 hours to 6.2 hours, mostly because the chatbot resolved "
    "about 28 percent of simple requests. Billing and account access generated the most complaints. "
    "Staffing was tight during the holidays. Reference {i}."
)


def scorers(kind: str) -> list[Scorer]:
    """``fast``: five scorers of ~10 us a run (the hardest case: reading and writing weigh the most);
    ``mixed``: five of 25-220 us (text similarity, completeness, keyword coverage)."""
    if kind == "fast":
        return [
            create_exact_match_scorer(),
            create_includes_scorer(),
            create_levenshtein_scorer(),
            create_regex_scorer(r"\d+ percent"),
            create_json_match_scorer(),
        ]
    return [
        create_exact_match_scorer(),
        create_content_similarity_scorer(),
        create_completeness_scorer(),
        create_keyword_coverage_scorer(),
        create_textual_difference_scorer(),
    ]


def build_store(path: Path, runs: int) -> None:
    seed = create_scorer(id="seed", version="1").generate_score(lambda **_: 1.0)

    async def store() -> None:
        sink = SQLiteSink(path)
        batch = []
        for i in range(runs):
            run = Run.from_messages(
                [
                    {"role": "user", "content": QUESTION.format(i=i)},
                    {"role": "assistant", "content": ANSWER.format(i=i)},
                ],
                run_id=f"run-{i:06d}",
                entity=f"agent-{i % 4}",
                ground_truth=ANSWER.format(i=i if i % 3 else i + 1),
            )
            batch.append(await seed.score(run, source="live"))
            if len(batch) == 1000:
                await sink.write(batch)
                batch = []
        if batch:
            await sink.write(batch)
        await sink.close()

    asyncio.run(store())


async def in_memory(runs: list[Run], scoring: list[Scorer]) -> tuple[float, float]:
    """(wall, CPU) seconds of scoring ``runs`` in memory."""
    started, cpu = time.perf_counter(), time.process_time()
    records = []
    for run in runs:
        for scorer in scoring:
            records.append(await scorer.score(run, source="rescore"))
    elapsed = time.perf_counter() - started, time.process_time() - cpu
    assert len(records) == len(runs) * len(scoring)
    return elapsed


async def stored(path: Path, scoring: list[Scorer], pairs: int) -> tuple[float, float]:
    """(wall, CPU of every thread) seconds of re-scoring the store at ``path``."""
    started, cpu = time.perf_counter(), time.process_time()
    summary = await arescore(path, scoring, force=True, progress=False)
    elapsed = time.perf_counter() - started, time.process_time() - cpu
    assert summary.total == pairs and summary.sink_errors == 0, summary
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scorers", choices=["fast", "mixed"], default="fast")
    args = parser.parse_args()
    scoring = scorers(args.scorers)
    pairs = args.runs * len(scoring)
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template.db"
        build_store(template, args.runs)
        with open_store(template) as store:
            runs = list(store.runs())
        # The 10,000 runs the baseline needs stay alive for the whole benchmark: frozen, the garbage
        # collector stops walking them on every full collection of either measurement.
        gc.freeze()
        ratios: list[float] = []
        cpu_ratios: list[float] = []
        for n in range(args.rounds):
            path = Path(tmp) / f"round-{n}.db"
            shutil.copy(template, path)
            memory, memory_cpu = asyncio.run(in_memory(runs, scoring))
            rescored, rescored_cpu = asyncio.run(stored(path, scoring, pairs))
            ratios.append(memory / rescored)
            cpu_ratios.append(memory_cpu / rescored_cpu)
            print(
                f"round {n + 1}: in memory {memory:.3f} s ({pairs / memory:,.0f} pairs/s, "
                f"CPU {memory_cpu:.2f} s), "
                f"rescore {rescored:.3f} s ({pairs / rescored:,.0f} pairs/s, CPU {rescored_cpu:.2f} s), "
                f"ratio {memory / rescored:.2f} (CPU {memory_cpu / rescored_cpu:.2f})"
            )
    print(
        f"median ratio rescore / in memory: {statistics.median(ratios):.2f} (target >= 0.80); "
        f"CPU time ratio {statistics.median(cpu_ratios):.2f}"
    )


if __name__ == "__main__":
    main()
