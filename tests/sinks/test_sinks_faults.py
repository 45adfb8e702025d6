"""Records no store can hold, records a sink rejects alone, per-record callbacks, invalid table names."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentevals import Run, ScoreRecord, ScoringEngine, create_scorer
from agentevals.engine import DeliveryOptions
from agentevals.sinks import (
    CallbackSink,
    DeadLetter,
    JsonlSink,
    MemorySink,
    PartialWriteError,
    PostgresSink,
    RetryPolicy,
    SQLiteSink,
    replay,
)

sys.path.insert(0, str(Path(__file__).parent.parent / "engine"))
from engine_helpers import accounted

FAST = RetryPolicy(attempts=3, initial=0.001, max_wait=0.005)


class BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


def _deep(levels: int) -> list[Any]:
    root: list[Any] = []
    node = root
    for _ in range(levels):
        child: list[Any] = []
        node.append(child)
        node = child
    return root


def _bad_value(kind: str) -> Any:
    if kind == "circular":
        loop: dict[str, Any] = {"a": 1}
        loop["self"] = loop
        return loop
    return {
        "deep": _deep(3000),
        "bytes": b"\xff\xfe not utf-8",
        "repr": BadRepr(),
        "surrogate": "lone \ud800 surrogate",
    }[kind]


BAD_KINDS = ["circular", "deep", "bytes", "repr", "surrogate"]


def _scorer_with_bad_values(kind: str) -> Any:
    """Scores every run; run ``bad`` gets an unstorable step result, reason and request context."""

    def preprocess(run: Run) -> Any:
        return _bad_value(kind) if run.run_id == "bad" else {"ok": True}

    def reason(run: Run) -> str:
        return "why \udcff" if run.run_id == "bad" and kind == "surrogate" else "fine"

    return (
        create_scorer(id="odd").preprocess(preprocess).generate_score(lambda run: 1.0).generate_reason(reason)
    )


def _runs(kind: str) -> list[Run]:
    good = [Run(run_id=f"good-{i}", input="q", output="a") for i in range(9)]
    context = {"value": _bad_value(kind)}
    return [*good[:4], Run(run_id="bad", input="q", output="a", request_context=context), *good[4:]]


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_unstorable_values_are_replaced_and_flagged_in_sqlite_and_jsonl(kind: str, tmp_path: Path) -> None:
    db, jsonl, dead = tmp_path / "s.db", tmp_path / "s.jsonl", tmp_path / "dead.jsonl"
    engine = ScoringEngine(
        _scorer_with_bad_values(kind),
        sinks=[SQLiteSink(db), JsonlSink(jsonl)],
        delivery=DeliveryOptions(retry=FAST, dead_letter=dead),
    )
    for run in _runs(kind):
        engine.submit(run)
    report = engine.shutdown(timeout=20)
    assert report, report  # nothing dead-lettered or lost: the bad record was stored, mended
    stats = accounted(engine, f"unstorable {kind}")
    assert stats.written == {"sqlite": 10, "jsonl": 10}
    with sqlite3.connect(db) as conn:
        rows = dict(conn.execute("SELECT run_id, metadata FROM agentevals_scores").fetchall())
    assert len(rows) == 10
    flagged = json.loads(rows["bad"])["agentevals_sanitized"]
    assert any(path.startswith("request_context.value") for path in flagged), flagged
    assert any(path.startswith("preprocess_step_result") for path in flagged), flagged
    assert json.loads(rows["good-0"]) is None or "agentevals_sanitized" not in json.loads(rows["good-0"])
    lines = [json.loads(line) for line in jsonl.read_text(encoding="utf-8").splitlines()]
    assert sorted(line["run_id"] for line in lines) == sorted(rows)
    assert not dead.exists()


async def test_the_dead_letter_file_holds_unstorable_records(tmp_path: Path) -> None:
    from agentevals import ScoreResult

    dead = DeadLetter(tmp_path / "dead.jsonl")
    records = [
        ScoreResult(scorer_id="s", scorer_name="s", run_id=f"r{i}", score=1.0, request_context={"v": bad})
        for i, bad in enumerate(_bad_value(kind) for kind in BAD_KINDS)
    ]
    assert await dead.write(records, MemorySink(), ValueError("x \ud800")) == 0
    dead.close()
    lines = (tmp_path / "dead.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(BAD_KINDS)
    memory = MemorySink()
    assert replay(tmp_path / "dead.jsonl", memory) == len(BAD_KINDS)
    assert all(record.sanitized for record in memory.records)


class PickySink:
    """Rejects any batch holding a record of run ``poison`` (a constraint the store enforces)."""

    name = "picky"

    def __init__(self) -> None:
        self.records: list[ScoreRecord] = []
        self.calls = 0

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        self.calls += 1
        if any(r.run_id == "poison" for r in records):
            raise ValueError("constraint violated")
        self.records.extend(records)

    async def close(self) -> None:
        return None


def test_a_record_the_sink_rejects_is_isolated_from_its_batch(tmp_path: Path) -> None:
    picky = PickySink()
    dead = tmp_path / "dead.jsonl"
    scorer = create_scorer(id="s").generate_score(lambda run: 1.0)
    delivery = DeliveryOptions(retry=FAST, dead_letter=dead, batch_size=64)
    engine = ScoringEngine(scorer, sinks=[picky], delivery=delivery)
    names = [f"ok-{i}" for i in range(63)]
    names.insert(40, "poison")
    for name in names:
        engine.submit(Run(run_id=name, input="q", output="a"))
    report = engine.shutdown(timeout=20)
    assert report.completed and report.written == 63 and report.dead_lettered == 1
    assert sorted(r.run_id for r in picky.records) == sorted(n for n in names if n != "poison")
    assert [json.loads(line)["record"]["run_id"] for line in dead.read_text().splitlines()] == ["poison"]
    accounted(engine, "isolated")
    assert picky.calls <= FAST.attempts + 2 * 7  # a bisection, not one write per record


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_callback_sink_delivers_per_record_and_retries_only_the_failures(
    is_async: bool, tmp_path: Path
) -> None:
    delivered: list[str] = []
    attempts: dict[str, int] = {}

    def take(record: ScoreRecord) -> None:
        attempts[record.run_id] = attempts.get(record.run_id, 0) + 1
        if record.run_id == "r-2" or (record.run_id == "r-5" and attempts["r-5"] < 3):
            raise ConnectionError(f"cannot take {record.run_id}")
        delivered.append(record.run_id)

    async def atake(record: ScoreRecord) -> None:
        take(record)

    dead = tmp_path / "dead.jsonl"
    sink = CallbackSink(atake if is_async else take)
    scorer = create_scorer(id="s").generate_score(lambda run: 1.0)
    delivery = DeliveryOptions(retry=FAST, dead_letter=dead, batch_size=10)
    engine = ScoringEngine(scorer, sinks=[sink], delivery=delivery)
    for i in range(8):
        engine.submit(Run(run_id=f"r-{i}", input="q", output="a"))
    report = engine.shutdown(timeout=20)
    assert sorted(delivered) == [f"r-{i}" for i in range(8) if i != 2]  # each exactly once
    assert attempts["r-0"] == 1 and attempts["r-5"] == 3 and attempts["r-2"] == FAST.attempts
    assert (report.written, report.dead_lettered) == (7, 1)
    assert [json.loads(line)["record"]["run_id"] for line in dead.read_text().splitlines()] == ["r-2"]
    accounted(engine, "callback")


async def test_callback_sink_raises_a_partial_write_error() -> None:
    def take(record: ScoreRecord) -> None:
        if record.run_id == "b":
            raise KeyError("b")

    from agentevals import ScoreResult

    records = [ScoreResult(scorer_id="s", scorer_name="s", run_id=n, score=1.0) for n in "abc"]
    with pytest.raises(PartialWriteError) as caught:
        await CallbackSink(take).write(records)
    assert [r.run_id for r in caught.value.failed] == ["b"] and isinstance(caught.value.error, KeyError)


@pytest.mark.parametrize("table", ["select", "TABLE", "order", "sqlite_master", "pg_class", "x" * 49])
def test_sql_keywords_and_reserved_table_names_are_refused(table: str) -> None:
    with pytest.raises(ValueError, match="invalid table name"):
        SQLiteSink("x.db", table=table)
    with pytest.raises(ValueError, match="invalid table name"):
        PostgresSink("", table=table)


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), "10"])
def test_postgres_connect_timeout_is_checked(timeout: Any) -> None:
    with pytest.raises(ValueError, match="connect_timeout must be a positive"):
        PostgresSink("", connect_timeout=timeout)


def test_unstorable_values_reach_postgres(tmp_path: Path, postgres: Any) -> None:
    import asyncio
    import uuid

    conninfo = postgres.conninfo
    table = f"agentevals_test_{uuid.uuid4().hex[:12]}"
    try:
        for kind in BAD_KINDS:
            engine = ScoringEngine(
                _scorer_with_bad_values(kind),
                sinks=[PostgresSink(conninfo, table=table)],
                delivery=DeliveryOptions(retry=FAST, dead_letter=tmp_path / "dead.jsonl"),
            )
            for run in _runs(kind):
                engine.submit(run.model_copy(update={"run_id": f"{kind}-{run.run_id}"}))
            assert engine.shutdown(timeout=30)
            assert accounted(engine, f"postgres {kind}").written == {"postgres": 10}
        rows = asyncio.run(_pg_count(conninfo, table))
        assert rows == (10 * len(BAD_KINDS), len(BAD_KINDS))
    finally:
        asyncio.run(_pg_drop(conninfo, table))
    assert not (tmp_path / "dead.jsonl").exists()


async def _pg_count(conninfo: str, table: str) -> tuple[int, int]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(conninfo) as conn:
        cur = await conn.execute(
            f"SELECT count(*), count(*) FILTER (WHERE metadata ? 'agentevals_sanitized') FROM {table}"
        )
        row = await cur.fetchone()
        assert row is not None
        return int(row[0]), int(row[1])


async def _pg_drop(conninfo: str, table: str) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        await conn.execute(f"DROP TABLE IF EXISTS {table}")


del os
