"""SQLite and PostgreSQL sink throughput (records/s) at batch sizes 1, 100 and 1000.

Run: ``uv run python benchmarks/bench_sinks.py``. PostgreSQL: 127.0.0.1:5432, database ``test`` (user
``postgres`` or the current user); skipped with a note when unreachable. Targets at batch 1000 on a
2-core machine: SQLite >= 50,000/s, PostgreSQL >= 20,000/s, for LLM-judge records (every step result,
a judge call, ~700 bytes of row). The baseline is the cost of building the rows alone
(``record_to_row``), measured in the same run, so the ratio shows what the store adds.

Each sink is timed from its first write after connecting (schema created), over ``sink.write`` calls
awaited one after the other into a fresh file/table: SQLite in a temporary directory (WAL, synchronous
NORMAL), PostgreSQL with its default durable commit. A last line per sink writes small code-scorer
records (no step results, no judge calls) at batch 1000, for comparison only.

Every record here belongs to a run of its own, so each also writes a runs row (schema version 2): the
main lines count score records with their runs. "scores only" is the same with ``store_runs="none"``;
"runs, 1 kB" writes records whose runs carry ~1 kB transcripts (tool call included), one score each:
its rate is runs/s (target >= 20,000 on SQLite).
"""

from __future__ import annotations

import asyncio
import getpass
import tempfile
import time
import uuid
from pathlib import Path

from agentevals import Message, ScoreRecord, ScoreResult
from agentevals.results import JudgeCall
from agentevals.sinks import PostgresSink, SQLiteSink, record_to_row
from agentevals.sinks._options import StoreRuns

BATCHES = {1: 1_000, 100: 20_000, 1000: 60_000}  # batch size -> records written


def make_records(n: int) -> list[ScoreRecord]:
    return [
        ScoreResult(
            scorer_id="answer-relevancy",
            scorer_name="Answer relevancy",
            run_id=f"run-{i}-{uuid.uuid4().hex[:8]}",
            trace_id=f"trace-{i}",
            entity="support-bot",
            source="live",
            score=(i % 10) / 10,
            reason="The answer addresses the question directly and stays on topic.",
            input={"question": f"How do I reset my password? ({i})"},
            output=[Message(role="assistant", content="Open Settings > Security and choose Reset.")],
            request_context={"user": f"u{i % 50}"},
            preprocess_step_result={"statements": ["Open Settings", "choose Reset"]},
            analyze_step_result={"results": [{"result": "yes", "reason": "relevant"}] * 2},
            generate_reason_prompt="Explain the score ...",
            judge_calls=[
                JudgeCall(step="analyze", model="openai/gpt-4o-mini", prompt_tokens=120, completion_tokens=30)
            ],
            duration_ms=812.0,
        )
        for i in range(n)
    ]


def make_transcript_records(n: int) -> list[ScoreRecord]:
    """Records of runs with ~1 kB transcripts: a question, a tool call and its result, an answer."""
    answer = "To reset your password open Settings, then Security, and choose Reset password. " * 4
    return [
        ScoreResult(
            scorer_id="exact-match",
            scorer_name="Exact match",
            run_id=f"run-{i}-{uuid.uuid4().hex[:8]}",
            trace_id=f"trace-{i}",
            entity="support-bot",
            source="live",
            score=1.0,
            input={"input_messages": [{"role": "user", "content": f"How do I reset my password? ({i})"}]},
            output=[
                Message(
                    role="assistant",
                    content="",
                    tool_invocations=[
                        {
                            "tool_call_id": f"c{i}",
                            "tool_name": "search_docs",
                            "args": {"query": "reset password", "top_k": 3},
                            "result": {"hits": ["Settings > Security > Reset", "Account recovery"]},
                        }
                    ],
                ),
                Message(role="assistant", content=answer),
            ],
            context=["Settings > Security > Reset password sends a link by email."],
            run_duration_ms=1830.0,
            metadata={"models": ["openai/gpt-4o-mini"], "usage": {"input_tokens": 420, "output_tokens": 96}},
            duration_ms=0.05,
        )
        for i in range(n)
    ]


def make_small_records(n: int) -> list[ScoreRecord]:
    return [
        ScoreResult(
            scorer_id="exact-match",
            scorer_name="Exact match",
            run_id=f"run-{i}-{uuid.uuid4().hex[:8]}",
            entity="support-bot",
            source="live",
            score=float(i % 2),
            input=f"How do I reset my password? ({i})",
            output="Open Settings > Security and choose Reset.",
            duration_ms=0.05,
        )
        for i in range(n)
    ]


async def throughput(sink: SQLiteSink | PostgresSink, records: list[ScoreRecord], batch: int) -> float:
    await sink.write(records[:1])  # connect + create the schema outside the timing
    started = time.perf_counter()
    for start in range(1, len(records), batch):
        await sink.write(records[start : start + batch])
    elapsed = time.perf_counter() - started
    await sink.close()
    return (len(records) - 1) / elapsed


def row_baseline(records: list[ScoreRecord]) -> float:
    started = time.perf_counter()
    for record in records:
        record_to_row(record)
    return len(records) / (time.perf_counter() - started)


async def pg_conninfo() -> str | None:
    import psycopg

    for user in dict.fromkeys(["postgres", getpass.getuser()]):
        conninfo = f"host=127.0.0.1 port=5432 dbname=test user={user} connect_timeout=3"
        try:
            conn = await psycopg.AsyncConnection.connect(conninfo)
        except psycopg.Error:
            continue
        await conn.close()
        return conninfo
    return None


async def drop(conninfo: str, table: str) -> None:
    import psycopg

    from agentevals._store._row import tables
    from agentevals._store._schema_check import store_tables

    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        for name in store_tables(tables(table)):
            await conn.execute(f"DROP TABLE IF EXISTS {name} CASCADE")


async def main() -> None:
    records = make_records(max(BATCHES.values()) + 1)
    base = row_baseline(records[:20_000])
    print(f"baseline: record_to_row alone {base:,.0f} rows/s")
    print(f"{'sink':<10} {'batch':>6} {'records':>8} {'records/s':>12} {'vs baseline':>12}")
    small = make_small_records(max(BATCHES.values()) + 1)
    transcripts = make_transcript_records(BATCHES[1000] + 1)
    with tempfile.TemporaryDirectory() as tmp:
        for batch, n in BATCHES.items():
            rate = await throughput(SQLiteSink(Path(tmp) / f"bench-{batch}.db"), records[: n + 1], batch)
            print(f"{'sqlite':<10} {batch:>6} {n:>8} {rate:>12,.0f} {rate / base:>11.2f}x")
        rate = await throughput(SQLiteSink(Path(tmp) / "bench-small.db"), small, 1000)
        print(f"{'sqlite':<10} {1000:>6} {len(small) - 1:>8} {rate:>12,.0f}  small records")
        n = BATCHES[1000]
        rate = await throughput(
            SQLiteSink(Path(tmp) / "bench-scores.db", store_runs="none"), records[: n + 1], 1000
        )
        print(f"{'sqlite':<10} {1000:>6} {n:>8} {rate:>12,.0f} {rate / base:>11.2f}x scores only")
        rate = await throughput(SQLiteSink(Path(tmp) / "bench-runs.db"), transcripts, 1000)
        print(f"{'sqlite':<10} {1000:>6} {n:>8} {rate:>12,.0f}  runs, 1 kB transcripts")
    conninfo = await pg_conninfo()
    if conninfo is None:
        print("postgres: skipped, no server reachable on 127.0.0.1:5432 database 'test'")
        return
    for batch, n in BATCHES.items():
        rate = await pg_throughput(conninfo, records[: n + 1], batch)
        print(f"{'postgres':<10} {batch:>6} {n:>8} {rate:>12,.0f} {rate / base:>11.2f}x")
    rate = await pg_throughput(conninfo, small, 1000)
    print(f"{'postgres':<10} {1000:>6} {len(small) - 1:>8} {rate:>12,.0f}  small records")
    n = BATCHES[1000]
    rate = await pg_throughput(conninfo, records[: n + 1], 1000, store_runs="none")
    print(f"{'postgres':<10} {1000:>6} {n:>8} {rate:>12,.0f} {rate / base:>11.2f}x scores only")
    rate = await pg_throughput(conninfo, transcripts, 1000)
    print(f"{'postgres':<10} {1000:>6} {n:>8} {rate:>12,.0f}  runs, 1 kB transcripts")
    print("targets at batch 1000: sqlite >= 50,000/s, postgres >= 20,000/s; runs >= 20,000/s")


async def pg_throughput(
    conninfo: str, records: list[ScoreRecord], batch: int, store_runs: StoreRuns = "sampled"
) -> float:
    table = f"agentevals_bench_{uuid.uuid4().hex[:10]}_scores"
    try:
        return await throughput(PostgresSink(conninfo, table=table, store_runs=store_runs), records, batch)
    finally:
        await drop(conninfo, table)


if __name__ == "__main__":
    asyncio.run(main())
