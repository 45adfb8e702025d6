"""Schema version 2: a version-1 store (one table, input and output on every score row) is migrated in
place with no row lost, on SQLite and on the real PostgreSQL; a newer store is refused."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_sinks_sql import _pg_rows, pg  # noqa: F401  (the fixture)

from agentevals import ScoreResult
from agentevals._evals._report import build_report
from agentevals.sinks import PostgresSink, SinkConfigError, SQLiteSink
from agentevals.sinks._row import SCHEMA_VERSION

#: The version-1 table, as SQLiteSink wrote it: (column, SQLite type, PostgreSQL type).
V1 = (
    ("id", "TEXT", "TEXT PRIMARY KEY"),
    ("created_at", "TEXT", "TIMESTAMPTZ NOT NULL"),
    ("scorer_id", "TEXT", "TEXT"),
    ("scorer_name", "TEXT", "TEXT"),
    ("run_id", "TEXT", "TEXT"),
    ("trace_id", "TEXT", "TEXT"),
    ("entity", "TEXT", "TEXT"),
    ("source", "TEXT", "TEXT"),
    ("score", "REAL", "DOUBLE PRECISION"),
    ("reason", "TEXT", "TEXT"),
    ("input", "TEXT", "JSONB"),
    ("output", "TEXT", "JSONB"),
    ("ground_truth", "TEXT", "JSONB"),
    ("request_context", "TEXT", "JSONB"),
    ("preprocess_step_result", "TEXT", "JSONB"),
    ("analyze_step_result", "TEXT", "JSONB"),
    ("generate_score_step_result", "TEXT", "JSONB"),
    ("preprocess_prompt", "TEXT", "TEXT"),
    ("analyze_prompt", "TEXT", "TEXT"),
    ("generate_score_prompt", "TEXT", "TEXT"),
    ("generate_reason_prompt", "TEXT", "TEXT"),
    ("judge_model", "TEXT", "TEXT"),
    ("prompt_tokens", "INTEGER", "INTEGER"),
    ("completion_tokens", "INTEGER", "INTEGER"),
    ("cost_usd", "REAL", "DOUBLE PRECISION"),
    ("duration_ms", "REAL", "DOUBLE PRECISION"),
    ("error_type", "TEXT", "TEXT"),
    ("error_message", "TEXT", "TEXT"),
    ("failed_step", "TEXT", "TEXT"),
    ("metadata", "TEXT", "JSONB"),
)
V1_COLUMNS = tuple(name for name, _, _ in V1)
LIVE_META = {"models": ["gpt-4o"], "usage": {"input_tokens": 30, "output_tokens": 7}, "thread_id": "t1"}


def v1_rows() -> list[dict[str, Any]]:
    """Rows as version 1 wrote them: two scorers on one run, a failure, a skip, an eval record."""
    base: dict[str, Any] = dict.fromkeys(V1_COLUMNS)
    rows = []
    specs = [  # id, created_at, scorer, run, score, error_type, metadata
        ("a1", "2026-01-01T00:00:01+00:00", "relevancy", "run-1", 0.9, None, LIVE_META),
        ("a2", "2026-01-01T00:00:02+00:00", "toxicity", "run-1", 0.0, None, LIVE_META),
        ("a3", "2026-01-01T00:00:03+00:00", "relevancy", "run-2", None, "TimeoutError", {}),
        (
            "a4",
            "2026-01-01T00:00:04+00:00",
            "faithfulness",
            "run-2",
            None,
            None,
            {"agentevals_outcome": "skipped", "agentevals_skip_reason": "no_context", "k": 1},
        ),
        ("a5", "2026-01-02T00:00:00+00:00", "exact", "run-3", 1.0, None, {"eval_id": "ev1", "repeat": 0}),
    ]
    for id_, created, scorer, run, score, error, meta in specs:
        row = dict(base)
        row.update(
            id=id_,
            created_at=created,
            scorer_id=scorer,
            scorer_name=scorer.title(),
            run_id=run,
            trace_id=f"trace-{run}",
            entity="bot",
            source="test" if "eval_id" in meta else "live",
            score=score,
            reason="because" if error is None else None,
            input={"question": f"q {run}"},
            output=[{"role": "assistant", "content": f"a {run}"}],
            ground_truth="truth",
            request_context={"user": "u"},
            analyze_step_result={"verdicts": ["yes"]},
            judge_model="openai/gpt-4o-mini",
            prompt_tokens=10,
            completion_tokens=2,
            duration_ms=5.0,
            error_type=error,
            error_message=None if error is None else "took too long",
            metadata=meta,
        )
        rows.append(row)
    return rows


def _check_migrated(scores: dict[str, dict[str, Any]], runs: dict[str, dict[str, Any]]) -> None:
    assert set(scores) >= {"a1", "a2", "a3", "a4", "a5"}  # every v1 row, under its id
    assert {k: scores[k]["outcome"] for k in ("a1", "a3", "a4")} == {
        "a1": "scored",
        "a3": "failed",
        "a4": "skipped",
    }
    assert scores["a4"]["skip_reason"] == "no_context" and scores["a4"]["metadata"] == {"k": 1}
    assert scores["a5"]["eval_id"] == "ev1" and scores["a3"]["error_message"] == "took too long"
    assert scores["a1"]["analyze_step_result"] == {"verdicts": ["yes"]} and scores["a1"]["score"] == 0.9
    assert set(runs) >= {"run-1", "run-2", "run-3"}
    one = runs["run-1"]
    assert one["input"] == {"question": "q run-1"} and one["output"][0]["content"] == "a run-1"
    assert (one["models"], one["input_tokens"], one["output_tokens"], one["thread_id"]) == (
        ["gpt-4o"],
        30,
        7,
        "t1",
    )
    assert (one["ground_truth"], one["trace_id"], one["entity"]) == ("truth", "trace-run-1", "bot")
    assert runs["run-3"]["eval_id"] == "ev1"


def _new_record() -> ScoreResult:
    return ScoreResult(scorer_id="relevancy", scorer_name="R", run_id="run-9", score=0.5, input="hi")


def _decode(row: dict[str, Any], json_columns: set[str]) -> dict[str, Any]:
    return {k: json.loads(v) if k in json_columns and isinstance(v, str) else v for k, v in row.items()}


def write_v1_sqlite(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(f"CREATE TABLE agentevals_scores ({', '.join(f'{n} {t}' for n, t, _ in V1)})")
        for column in ("scorer_id", "run_id"):
            conn.execute(f"CREATE INDEX agentevals_scores_{column}_idx ON agentevals_scores ({column})")
        conn.execute(
            "CREATE UNIQUE INDEX agentevals_scores_created_at_idx ON agentevals_scores (created_at, id)"
        )
        for row in v1_rows():
            values = [
                json.dumps(v) if isinstance(v, dict | list) or k in ("ground_truth",) else v
                for k, v in row.items()
            ]
            conn.execute(f"INSERT INTO agentevals_scores VALUES ({', '.join('?' * len(V1))})", values)


async def test_sqlite_v1_store_is_migrated_in_place(tmp_path: Path) -> None:
    db = tmp_path / "v1.db"
    write_v1_sqlite(db)
    sink = SQLiteSink(db)
    sink.check()  # migrates
    await sink.write([_new_record()])
    await sink.close()
    SQLiteSink(db).check()  # a second open finds version 4
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        assert conn.execute("SELECT version FROM agentevals_schema").fetchall()[0][0] == SCHEMA_VERSION
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "agentevals_scores_v1" not in tables
        json_cols = {
            "metadata",
            "analyze_step_result",
            "input",
            "output",
            "ground_truth",
            "models",
            "context",
        }
        scores = {
            r["id"]: _decode(dict(r), json_cols) for r in conn.execute("SELECT * FROM agentevals_scores")
        }
        runs = {
            r["run_id"]: _decode(dict(r), json_cols) for r in conn.execute("SELECT * FROM agentevals_runs")
        }
    assert len(scores) == len(v1_rows()) + 1 and len(runs) == 4
    _check_migrated(scores, runs)
    assert build_report(db).total == 6  # the report reads the current version


def test_report_migrates_a_v1_store_first(tmp_path: Path) -> None:
    db = tmp_path / "v1.db"
    write_v1_sqlite(db)
    report = build_report(db)
    assert (report.total, report.failures) == (5, 1)


async def test_newer_store_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "newer.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE agentevals_schema (version INTEGER PRIMARY KEY, applied_at TEXT)")
        conn.execute("INSERT INTO agentevals_schema VALUES (?, NULL)", (SCHEMA_VERSION + 1,))
    newer = f"schema version {SCHEMA_VERSION + 1}, newer than this agentevals"
    with pytest.raises(SinkConfigError, match=newer):
        SQLiteSink(db).check()
    sink = SQLiteSink(db)
    with pytest.raises(SinkConfigError, match="upgrade agentevals"):
        await sink.write([_new_record()])
    await sink.close()


async def test_store_runs_none_writes_scores_only(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    sink = SQLiteSink(db, store_runs="none")
    await sink.write([_new_record()])
    await sink.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM agentevals_scores").fetchone() == (1,)
        assert conn.execute("SELECT count(*) FROM agentevals_runs").fetchone() == (0,)
    with pytest.raises(ValueError, match="store_runs"):
        SQLiteSink(db, store_runs="some")  # type: ignore[arg-type]


async def write_v1_postgres(conninfo: str, table: str) -> None:
    """``table`` as version 1 of PostgresSink made it, with :func:`v1_rows`."""
    import psycopg
    from psycopg.types.json import Jsonb

    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        await conn.execute(f"CREATE TABLE {table} ({', '.join(f'{n} {t}' for n, _, t in V1)})")
        await conn.execute(f"CREATE INDEX {table}_run_id_idx ON {table} (run_id)")
        for row in v1_rows():
            values = [
                Jsonb(v) if t == "JSONB" and v is not None else v
                for (_, _, t), v in zip(V1, row.values(), strict=True)
            ]
            await conn.execute(f"INSERT INTO {table} VALUES ({', '.join(['%s'] * len(V1))})", values)


async def test_report_migrates_a_v1_postgres_table_first(pg: tuple[str, str], postgres: Any) -> None:  # noqa: F811
    conninfo, table = pg
    await write_v1_postgres(conninfo, table)
    report = await asyncio.to_thread(build_report, postgres.url, table=table)
    assert (report.total, report.failures, report.runs) == (5, 1, 3)
    assert {c.scorer_id: c.skipped for c in report.coverage}["faithfulness"] == 1
    assert await _pg_rows(conninfo, f"SELECT version FROM {table}_schema") == [{"version": SCHEMA_VERSION}]
    assert len(await _pg_rows(conninfo, f"SELECT run_id FROM {table}_runs")) == 3


async def test_postgres_v1_table_is_migrated_in_place(pg: tuple[str, str]) -> None:  # noqa: F811
    conninfo, table = pg
    await write_v1_postgres(conninfo, table)
    sink = PostgresSink(conninfo, table=table)
    sink.check()  # migrates
    await sink.write([_new_record()])
    await sink.close()
    PostgresSink(conninfo, table=table).check()
    scores = {r["id"]: r for r in await _pg_rows(conninfo, f"SELECT * FROM {table}")}
    runs = {r["run_id"]: r for r in await _pg_rows(conninfo, f"SELECT * FROM {table}_runs")}
    assert len(scores) == len(v1_rows()) + 1 and len(runs) == 4
    _check_migrated(scores, runs)
    assert await _pg_rows(conninfo, f"SELECT version FROM {table}_schema") == [{"version": SCHEMA_VERSION}]
    assert not await _pg_rows(conninfo, f"SELECT 1 FROM pg_tables WHERE tablename = '{table}_v1'")
