"""Fault injection: the engine driven through failing judges, failing sinks, unstorable values,
BaseExceptions and shutdowns; after each, every run and every record must be accounted for exactly
(``EngineStats.unbalanced()`` is empty) and the counts are printed (``pytest -s`` shows them).

Judges are a ``FakeJudgeServer`` on 127.0.0.1 (and a closed port there); PostgreSQL "down" is a port
on 127.0.0.1 where nothing listens. No other host is ever contacted.
"""

from __future__ import annotations

import asyncio
import errno
import json
import socket
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import accounted, length_scorer, runs
from test_engine_sigterm import RUNS, run_child

from agentevals import PromptStep, Run, ScoreRecord, ScoringEngine, create_scorer
from agentevals.engine import DeliveryOptions, QueueOptions, ScoringOptions
from agentevals.results import ScoreFailure
from agentevals.sinks import JsonlSink, MemorySink, PostgresSink, RetryPolicy, SQLiteSink, replay
from agentevals.testing import ChatRequest, FakeJudgeServer, Reply

FAST = RetryPolicy(attempts=3, initial=0.005, max_wait=0.02, timeout=2.0)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _judged_scorer(judge: Any, id: str = "judged") -> Any:
    return create_scorer(id=id, judge=judge).generate_score(
        PromptStep(description="grade", create_prompt=lambda run: f"Grade this: {run.input}")
    )


# -- the judge fails ----------------------------------------------------------------------------------


def test_judge_rate_limited_failing_hanging_and_refused(tmp_path: Path) -> None:
    def respond(request: ChatRequest) -> Reply:
        prompt = request.prompt
        if "429" in prompt:
            return Reply.rate_limited()
        if "500" in prompt:
            return Reply.server_error()
        if "hang" in prompt:
            return Reply.slow(3.0, {"score": 1.0})
        return Reply.json({"score": 0.5})

    memory = MemorySink()
    with FakeJudgeServer(responder=respond) as server:
        judge = server.judge(timeout=0.3, max_attempts=2)
        refused = server.judge(api_base=f"http://127.0.0.1:{_closed_port()}/v1", timeout=0.3, max_attempts=2)
        engine = ScoringEngine(
            [_judged_scorer(judge), _judged_scorer(refused, "refused")],
            sinks=[memory],
            scoring=ScoringOptions(timeout=10),
            delivery=DeliveryOptions(dead_letter=tmp_path / "dead.jsonl"),
            breaker=None,  # every judge failure as an error record (the breaker skips: test_engine_breaker)
        )
        kinds = ["ok", "429", "500", "hang"] * 5
        for i, kind in enumerate(kinds):
            engine.submit(Run(run_id=f"{kind}-{i}", input=f"{kind} question", output="answer"))
        report = engine.shutdown(timeout=60)
    assert report, report  # judge failures are error records, all of them stored
    stats = accounted(engine, "judge 429/500/hang/refused")
    assert (stats.finished, stats.records) == (20, 40)
    by_run = {(r.scorer_id, r.run_id): r for r in memory.records}
    for i, kind in enumerate(kinds):
        record = by_run[("judged", f"{kind}-{i}")]
        assert (kind == "ok") == (not isinstance(record, ScoreFailure)), record
        assert isinstance(by_run[("refused", f"{kind}-{i}")], ScoreFailure)
    assert stats.scored == 5 and stats.failed == 35


# -- the sink fails ----------------------------------------------------------------------------------


class ReadOnlySQLiteSink(SQLiteSink):
    """A SQLite sink whose connection is opened read-only (``mode=ro``): SQLite refuses every write."""

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = sqlite3.connect(
                f"file:{self.path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
            )
        return self._conn


class FullDiskSink(JsonlSink):
    """A JSONL sink on a disk with no space left."""

    name = "full"

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(self.path))


def _fill(engine: ScoringEngine, n: int = 50) -> None:
    for run in runs(n):
        engine.submit(run)


def test_sink_read_only_full_and_locked_then_replayed(tmp_path: Path) -> None:
    read_only, locked = tmp_path / "ro.db", tmp_path / "locked.db"
    for path in (read_only, locked):  # both exist with their schema
        asyncio.run(_create(path))
    holder = sqlite3.connect(locked, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds a write transaction
    dead = tmp_path / "dead.jsonl"
    memory = MemorySink()
    engine = ScoringEngine(
        length_scorer(),
        sinks=[ReadOnlySQLiteSink(read_only), FullDiskSink(tmp_path / "x.jsonl"), _Locked(locked), memory],
        delivery=DeliveryOptions(
            retry=RetryPolicy(attempts=2, initial=0.005, max_wait=0.01, timeout=0.3), dead_letter=dead
        ),
    )
    _fill(engine)
    report = engine.shutdown(timeout=30)
    holder.execute("ROLLBACK")
    holder.close()
    assert report.completed and not report
    stats = accounted(engine, "sink read-only / full / locked")
    assert stats.written == {"sqlite": 0, "full": 0, "locked": 0, "memory": 50}
    assert (stats.dead_lettered, stats.lost) == (150, 0)
    sinks = [json.loads(line)["sink"] for line in dead.read_text().splitlines()]
    assert {name: sinks.count(name) for name in set(sinks)} == {"sqlite": 50, "full": 50, "locked": 50}
    # Once the lock is gone, the dead letters of the locked store go in.
    assert replay(dead, SQLiteSink(locked), only_sink="locked") == 50
    with sqlite3.connect(locked) as conn:
        assert conn.execute("SELECT count(*) FROM agentevals_scores").fetchone()[0] == 50


class _Locked(SQLiteSink):
    name = "locked"


async def _create(path: Path) -> None:
    sink = SQLiteSink(path)
    await sink.write([])
    await sink.close()


def test_postgres_down(tmp_path: Path) -> None:
    pytest.importorskip("psycopg", reason="psycopg is not installed (uv sync --extra postgres)")
    down = PostgresSink(f"host=127.0.0.1 port={_closed_port()} dbname=test user=postgres", connect_timeout=1)
    memory = MemorySink()
    engine = ScoringEngine(
        length_scorer(),
        sinks=[down, memory],
        delivery=DeliveryOptions(retry=FAST, dead_letter=tmp_path / "dead.jsonl"),
    )
    _fill(engine)
    report = engine.shutdown(timeout=30)
    assert report.completed and report.dead_lettered == 50 and not report
    stats = accounted(engine, "postgres down")
    assert stats.written == {"postgres": 0, "memory": 50} and stats.sink_errors >= FAST.attempts


# -- the records cannot be stored ----------------------------------------------------------------------


class _BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_unserialisable_values(tmp_path: Path) -> None:
    loop: dict[str, Any] = {}
    loop["loop"] = loop
    deep: list[Any] = []
    node = deep
    for _ in range(2000):
        node.append([])
        node = node[0]
    bad = [loop, deep, b"\xff\xfe", _BadRepr(), "lone \ud800"]
    db, jsonl = tmp_path / "s.db", tmp_path / "s.jsonl"
    engine = ScoringEngine(
        create_scorer(id="ctx").generate_score(lambda run: 1.0),
        sinks=[SQLiteSink(db), JsonlSink(jsonl)],
        delivery=DeliveryOptions(retry=FAST, dead_letter=tmp_path / "dead.jsonl"),
    )
    for i in range(30):
        context = {"value": bad[i % len(bad)]} if i % 3 == 0 else {"i": i}
        engine.submit(Run(run_id=f"r{i}", input="q", output="a", request_context=context))
    report = engine.shutdown(timeout=30)
    assert report, report
    stats = accounted(engine, "unserialisable values")
    assert stats.written == {"sqlite": 30, "jsonl": 30}
    with sqlite3.connect(db) as conn:
        flagged = conn.execute(
            "SELECT count(*) FROM agentevals_scores WHERE metadata LIKE '%agentevals_sanitized%'"
        ).fetchone()[0]
    assert flagged == 10
    assert len(jsonl.read_text(encoding="utf-8").splitlines()) == 30


# -- BaseExceptions ---------------------------------------------------------------------------------


class _Interrupting:
    name = "interrupting"

    def __init__(self) -> None:
        self.calls = 0
        self.records: list[ScoreRecord] = []

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        self.calls += 1
        errors: list[BaseException] = [KeyboardInterrupt(), SystemExit(1), asyncio.CancelledError()]
        if self.calls <= len(errors):
            raise errors[self.calls - 1]
        self.records.extend(records)

    async def close(self) -> None:
        raise SystemExit("close failed")


def test_base_exceptions_in_steps_and_sinks(tmp_path: Path) -> None:
    errors: list[type[BaseException]] = [KeyboardInterrupt, SystemExit, asyncio.CancelledError, GeneratorExit]

    def step(run: Run) -> float:
        index = int(run.run_id.split("-")[1])
        if index % 5 == 0:
            raise errors[index // 5 % len(errors)]()
        return 1.0

    async def astep(run: Run) -> float:
        await asyncio.sleep(0)
        return step(run)

    sink, memory = _Interrupting(), MemorySink()
    engine = ScoringEngine(
        [create_scorer(id="sync").generate_score(step), create_scorer(id="async").generate_score(astep)],
        sinks=[sink, memory],
        delivery=DeliveryOptions(
            retry=RetryPolicy(attempts=5, initial=0.001, max_wait=0.002),
            dead_letter=tmp_path / "dead.jsonl",
            batch_size=1000,
        ),
    )
    _fill(engine, 40)
    report = engine.shutdown(timeout=30)
    assert report, report
    stats = accounted(engine, "BaseExceptions in steps and sinks")
    assert (stats.scored, stats.failed, stats.sink_errors) == (64, 16, 3)
    assert stats.written == {"interrupting": 80, "memory": 80}
    failures = sorted({r.error_type for r in memory.records if isinstance(r, ScoreFailure)})
    assert failures == ["CancelledError", "GeneratorExit", "KeyboardInterrupt", "SystemExit"]


# -- shutdown and SIGTERM with 10,000 queued runs ------------------------------------------------------


def test_shutdown_out_of_time_with_10000_queued_runs(tmp_path: Path) -> None:
    release = threading.Event()

    async def slow(run: Run) -> float:
        while not release.is_set():
            await asyncio.sleep(0.01)
        return 1.0

    memory = MemorySink()
    engine = ScoringEngine(
        [create_scorer(id="slow").generate_score(slow), length_scorer()],
        sinks=[memory],
        queue=QueueOptions(size=20_000),
        scoring=ScoringOptions(max_concurrency=4),
        delivery=DeliveryOptions(dead_letter=tmp_path / "dead.jsonl"),
    )
    for run in runs(10_000):
        engine.submit(run)
    report = engine.shutdown(timeout=1.0)
    release.set()
    assert not report.completed and report.abandoned == 10_000 and not report
    stats = accounted(engine, "shutdown out of time, 10,000 queued")
    assert (stats.accepted, stats.abandoned, stats.finished) == (10_000, 10_000, 0)
    assert stats.records == len(memory.records) + stats.dead_lettered  # made before the end: kept


def test_sigterm_with_10000_queued_runs(tmp_path: Path) -> None:
    code, _, err, rows = run_child(tmp_path, "default")
    print(f"SIGTERM with {RUNS} queued runs: exit {code}, {rows} rows stored; {err.strip().splitlines()[-1]}")
    assert code < 0 and rows == RUNS
