"""SQLite (real file) and PostgreSQL (real server on 127.0.0.1:5432, database ``test``) sinks."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sink_helpers import sample_records

from agentevals import ScoreRecord, ScoreResult
from agentevals._store._row import JSON_COLUMNS, RUN_COLUMNS, sql_row
from agentevals.engine import DeliveryOptions
from agentevals.sinks import COLUMNS, PostgresSink, SQLiteSink, _sqlite, record_to_row

# -- SQLite -----------------------------------------------------------------------------------------


async def test_sqlite_file_schema_wal_indexes_and_rows(tmp_path: Path) -> None:
    db = tmp_path / "nested" / "scores.db"
    sink = SQLiteSink(db)
    records = sample_records(3)
    await sink.write(records)
    await sink.write(records)  # idempotent: a retried batch adds no duplicates
    await sink.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        cols = [row[1] for row in conn.execute("PRAGMA table_info(agentevals_scores)")]
        assert tuple(cols) == COLUMNS
        indexes = {row[1] for row in conn.execute("PRAGMA index_list(agentevals_scores)")}
        names = ("scorer_created", "run", "entity_created", "eval")
        assert {f"agentevals_scores_{c}_idx" for c in names} | {"agentevals_scores_id_key"} <= indexes
        run_cols = [row[1] for row in conn.execute("PRAGMA table_info(agentevals_runs)")]
        assert tuple(run_cols) == RUN_COLUMNS
        run_indexes = {r[1] for r in conn.execute("PRAGMA index_list(agentevals_runs)")}
        assert "agentevals_runs_entity_created_idx" in run_indexes
        assert conn.execute("SELECT * FROM agentevals_meta").fetchall() == [("schema_version", "2")]
        conn.row_factory = sqlite3.Row
        rows = conn.execute("SELECT * FROM agentevals_scores ORDER BY created_at").fetchall()
        runs = conn.execute("SELECT * FROM agentevals_runs ORDER BY created_at").fetchall()
    assert [r["run_id"] for r in runs] == ["run-0", "run-1", "run-2", "run-failed"]  # one row per run
    assert json.loads(runs[0]["input"]) == {"question": "q0"} and runs[0]["trace_id"] == "trace-0"
    assert len(rows) == 4
    first = dict(rows[0])
    assert first["created_at"] == "2026-01-02T03:04:05+00:00"
    assert (first["scorer_id"], first["run_id"], first["entity"], first["source"]) == (
        "relevancy", "run-0", "support-bot", "live"
    )  # fmt: skip
    assert json.loads(first["analyze_step_result"]) == {"verdicts": ["yes", "no"]}
    assert (first["prompt_tokens"], first["judge_model"]) == (17, "openai/gpt-4o-mini")
    failure = dict(next(r for r in rows if r["error_type"]))
    assert (failure["score"], failure["error_type"], failure["error_message"]) == (
        None, "TimeoutError", "took too long"
    )  # fmt: skip


async def test_sqlite_json_columns_are_queryable(tmp_path: Path) -> None:
    sink = SQLiteSink(tmp_path / "q.db", table="custom_scores")
    await sink.write(sample_records(3))
    await sink.close()
    with sqlite3.connect(tmp_path / "q.db") as conn:
        got = conn.execute(
            "SELECT json_extract(input, '$.question') FROM custom_runs WHERE run_id = 'run-2'"
        ).fetchone()
    assert got == ("q2",)


async def test_a_records_judge_input_flags_are_stored_in_its_metadata(tmp_path: Path) -> None:
    flagged = sample_records(1)[0].model_copy(
        update={"judge_input_flags": ("verdict_json", "judge_address"), "metadata": {"team": "a"}}
    )
    sink = SQLiteSink(tmp_path / "flags.db")
    await sink.write([flagged])
    await sink.close()
    with sqlite3.connect(tmp_path / "flags.db") as conn:
        (metadata,) = conn.execute("SELECT metadata FROM agentevals_scores").fetchone()
    assert json.loads(metadata) == {
        "team": "a",
        "agentevals_judge_input_flags": ["verdict_json", "judge_address"],
    }


def _renamed(records: list[ScoreRecord], prefix: str) -> list[ScoreRecord]:
    return [r.model_copy(update={"run_id": f"{prefix}-{i}"}) for i, r in enumerate(records)]


def _odd_record() -> ScoreResult:
    """U+0000 in text and JSON, a NaN score and an infinite duration."""
    return ScoreResult(
        scorer_id="s",
        scorer_name="s",
        run_id="odd",
        score=float("nan"),
        reason="a\x00b",
        input={"q": "x\x00y"},
        duration_ms=float("inf"),
    )


def _sqlite_rows(db: Path, table: str = "agentevals_scores") -> dict[str, tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return {row[0]: row for row in conn.execute(f"SELECT {', '.join(COLUMNS)} FROM {table}")}


async def test_sqlite_large_batches_store_exactly_the_rows_once(tmp_path: Path) -> None:
    db = tmp_path / "big.db"
    sink = SQLiteSink(db)
    odd = _odd_record()
    records = [*sample_records(250), odd]  # several statements; the one with odd is bound row by row
    await sink.write(records)
    await sink.write(records[90:])  # a partly re-sent batch adds nothing
    await sink.write([odd])  # a batch of one statement
    await sink.close()
    rows = _sqlite_rows(db)
    assert len(rows) == len(records)
    for record in records:
        row = sql_row(record)
        assert rows[row[0]] == row
    odd_row = sql_row(odd)
    assert odd_row[COLUMNS.index("reason")] == "a\x00b"
    assert odd_row[COLUMNS.index("score")] is None and odd_row[COLUMNS.index("duration_ms")] is None


async def test_sqlite_batch_is_all_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = sample_records(250)
    row_json = _sqlite.row_json

    def failing_row_json(record: ScoreRecord) -> str:
        if record is records[170]:
            raise ValueError("cannot serialize")
        return row_json(record)

    sink = SQLiteSink(tmp_path / "atomic.db")
    monkeypatch.setattr(_sqlite, "row_json", failing_row_json)
    with pytest.raises(ValueError, match="cannot serialize"):
        await sink.write(records)  # the first statements ran, then were rolled back
    monkeypatch.undo()
    await sink.write(records[:10])
    await sink.close()
    assert len(_sqlite_rows(tmp_path / "atomic.db")) == 10


async def test_sqlite_batch_is_all_or_nothing_when_a_statement_fails(tmp_path: Path) -> None:
    sink = SQLiteSink(tmp_path / "atomic.db")
    statement = sink._statement
    built: list[int] = []
    ran: list[int] = []

    def failing_statement(conn: sqlite3.Connection, records: Any) -> Any:
        run = statement(conn, records)
        index = len(built)
        built.append(index)

        def run_or_fail() -> None:
            ran.append(index)
            run()
            if index == 1:
                raise sqlite3.OperationalError("disk I/O error")

        return run_or_fail

    sink._statement = failing_statement  # type: ignore[method-assign]
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        await sink.write(sample_records(350))
    await sink.close()
    assert ran == [0, 1]  # the statements after the failed one were skipped, the first rolled back
    assert _sqlite_rows(tmp_path / "atomic.db") == {}


@pytest.mark.parametrize("table", ["bad;name", "1starts_with_digit", "x" * 64, "", "drop table--"])
def test_table_names_are_validated(table: str) -> None:
    with pytest.raises(ValueError, match="invalid table name"):
        SQLiteSink("x.db", table=table)
    with pytest.raises(ValueError, match="invalid table name"):
        PostgresSink("", table=table)


# -- PostgreSQL -------------------------------------------------------------------------------------


@pytest.fixture
async def pg(postgres: Any) -> AsyncIterator[tuple[str, str]]:
    import psycopg

    conninfo = postgres.conninfo
    table = f"agentevals_test_{uuid.uuid4().hex[:12]}"
    yield conninfo, table
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        suffixes = ("runs", "schema", "rollup", "bins", "scorers", "drops", "v1")
        for name in (table, *(f"{table}_{suffix}" for suffix in suffixes)):
            await conn.execute(f"DROP TABLE IF EXISTS {name}")


async def _pg_rows(conninfo: str, sql: str) -> list[dict[str, Any]]:
    import psycopg
    from psycopg.rows import dict_row

    async with await psycopg.AsyncConnection.connect(conninfo, row_factory=dict_row) as conn:
        cur = await conn.execute(sql)
        return await cur.fetchall()


async def test_postgres_schema_rows_and_idempotence(pg: tuple[str, str], tmp_path: Path) -> None:
    conninfo, table = pg
    sink = PostgresSink(conninfo, table=table)
    records = sample_records(3)
    await sink.write(records)
    await sink.write(records)
    await sink.close()
    cols = await _pg_rows(
        conninfo,
        f"SELECT column_name, data_type FROM information_schema.columns WHERE table_name = '{table}' "
        "ORDER BY ordinal_position",
    )
    assert tuple(c["column_name"] for c in cols) == COLUMNS  # the same columns as SQLite
    types = {c["column_name"]: c["data_type"] for c in cols}
    assert (types["metadata"], types["created_at"], types["score"]) == (
        "jsonb", "timestamp with time zone", "double precision"
    )  # fmt: skip
    run_cols = await _pg_rows(
        conninfo,
        f"SELECT column_name FROM information_schema.columns WHERE table_name = '{table}_runs' "
        "ORDER BY ordinal_position",
    )
    assert tuple(c["column_name"] for c in run_cols) == RUN_COLUMNS
    indexes = await _pg_rows(conninfo, f"SELECT indexname FROM pg_indexes WHERE tablename = '{table}'")
    names = ("scorer_created", "run", "entity_created", "eval")
    assert {f"{table}_{c}_idx" for c in names} <= {i["indexname"] for i in indexes}
    meta = await _pg_rows(conninfo, f"SELECT key, value FROM {table}_meta")
    assert meta == [{"key": "schema_version", "value": "2"}]
    rows = await _pg_rows(conninfo, f"SELECT * FROM {table} ORDER BY created_at")
    assert len(rows) == 4
    first = rows[0]
    assert first["created_at"] == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert first["analyze_step_result"] == {"verdicts": ["yes", "no"]}
    assert first["metadata"] == {"version": 2, "nan": None}
    assert first["id"] == record_to_row(records[0])["id"]
    failure = next(r for r in rows if r["error_type"])
    assert failure["score"] is None and failure["error_message"] == "took too long"
    got = await _pg_rows(conninfo, f"SELECT input->>'question' AS q FROM {table}_runs WHERE run_id = 'run-1'")
    assert got == [{"q": "q1"}]

    # The same records in SQLite give the same values column by column.
    lite = SQLiteSink(tmp_path / "same.db", table=table)
    await lite.write(records)
    await lite.close()
    with sqlite3.connect(tmp_path / "same.db") as conn:
        conn.row_factory = sqlite3.Row
        lrow = dict(conn.execute(f"SELECT * FROM {table} WHERE run_id = 'run-0'").fetchone())
    for column in COLUMNS:
        value = lrow[column]
        if column == "created_at":
            value = datetime.fromisoformat(value)
        elif column in JSON_COLUMNS and value is not None:
            value = json.loads(value)
        assert value == first[column], column


async def test_postgres_unreachable_server_raises_for_retry() -> None:
    import psycopg

    sink = PostgresSink("host=127.0.0.1 port=1 dbname=test user=postgres connect_timeout=1")
    with pytest.raises(psycopg.OperationalError):
        await sink.write(sample_records(1))
    await sink.close()


def test_engine_writes_to_postgres_and_sqlite_together(pg: tuple[str, str], tmp_path: Path) -> None:
    from agentevals import Run, ScoringEngine, create_scorer

    conninfo, table = pg
    scorer = create_scorer(id="short").generate_score(lambda run, **_: float(len(run.output_text) < 5))
    engine = ScoringEngine(
        [scorer],
        sinks=[PostgresSink(conninfo, table=table), SQLiteSink(tmp_path / "both.db")],
        delivery=DeliveryOptions(dead_letter=tmp_path / "dl.jsonl"),
        entity="bot",
    )
    for i in range(1000):
        engine.submit(Run(run_id=f"r{i}", output="x" * (i % 10)))
    assert engine.shutdown(timeout=30)
    import asyncio

    rows = asyncio.run(_pg_rows(conninfo, f"SELECT count(*) AS n, sum(score) AS s FROM {table}"))
    assert rows == [{"n": 1000, "s": 500.0}]
    with sqlite3.connect(tmp_path / "both.db") as conn:
        assert conn.execute("SELECT count(*), sum(score) FROM agentevals_scores").fetchone() == (1000, 500.0)
    assert not (tmp_path / "dl.jsonl").exists()


async def test_postgres_stores_text_with_nul_characters(pg: tuple[str, str]) -> None:
    from agentevals import ScoreResult

    conninfo, table = pg
    sink = PostgresSink(conninfo, table=table)
    record = ScoreResult(
        scorer_id="s", scorer_name="s", run_id="nul", score=1.0, reason="a\x00b", input={"q": "x\x00y\\u0000"}
    )
    await sink.write([record])
    await sink.close()
    rows = await _pg_rows(conninfo, f"SELECT reason, input FROM {table} JOIN {table}_runs USING (run_id)")
    assert rows == [{"reason": "a\ufffdb", "input": {"q": "x\ufffdy\\u0000"}}]


async def test_postgres_copy_batches_resent_batches_and_odd_values(pg: tuple[str, str]) -> None:
    conninfo, table = pg
    sink = PostgresSink(conninfo, table=table)
    records = sample_records(120)  # COPY
    await sink.write(records)
    await sink.write(records[50:])  # COPY meets a stored row: nothing written, then INSERT adds nothing
    others = [*_renamed(sample_records(70), "other"), _odd_record()]  # COPY cannot send U+0000
    await sink.write(others)
    await sink.close()
    rows = {r["run_id"]: r for r in await _pg_rows(conninfo, f"SELECT * FROM {table}")}
    assert len(rows) == len(records) + len(others)
    for record in (records[0], records[119], others[0]):
        expected = record_to_row(record)
        got = rows[record.run_id]
        for column in COLUMNS:
            value = expected[column]
            if column in JSON_COLUMNS and value is not None:
                value = json.loads(value)
            assert got[column] == value, column
    odd = rows["odd"]
    (odd_run,) = await _pg_rows(conninfo, f"SELECT input FROM {table}_runs WHERE run_id = 'odd'")
    assert (odd["reason"], odd_run["input"]) == ("a\ufffdb", {"q": "x\ufffdy"})
    assert odd["score"] is None and odd["duration_ms"] is None
