"""The rollup the database keeps with triggers equals the aggregates of the score rows after inserts,
re-sent batches, replacements (``on_conflict="replace"``, as ``rescore --force``) and deletes, in SQLite
(a real file) and PostgreSQL (the real server); a rollup or histogram dropped by hand comes back, filled
from the rows that are kept, and the triggers of the versions table that was kept come back with it."""

from __future__ import annotations

import math
import sqlite3
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentevals import ScoreRecord
from agentevals._store._bins import score_bin
from agentevals._store._rollup import KEY
from agentevals.results import JudgeCall, ScoreFailure, ScoreResult, ScoreSkipped
from agentevals.sinks import PostgresSink, SQLiteSink

_SELECT_ROWS = (
    "SELECT created_at, entity, scorer_id, source, outcome, skip_reason, error_type, score, cost_usd, "
    "prompt_tokens, completion_tokens FROM {table}"
)
_SELECT_ROLLUP = (
    "SELECT bucket, entity, scorer_id, source, outcome, skip_reason, error_type, rows, scores, total, "
    "squares, low, high, priced, cost, tokens FROM {table}"
)
_SELECT_BINS = "SELECT bucket, entity, scorer_id, source, bin, count FROM {table}"


def _records(n: int, *, score: float | None = None) -> list[ScoreRecord]:
    """Records over hours, 3 entities (one None), 2 scorers, scored / failed / skipped, some priced;
    with ``score``, every one scored that (the same ids: they replace failures and skips too)."""
    start = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
    out: list[ScoreRecord] = []
    for i in range(n):
        common: dict[str, Any] = {
            "scorer_id": f"scorer-{i % 2}",
            "scorer_name": "s",
            "run_id": f"run-{i}",
            "entity": [None, "bot-a", "bot-b"][i % 3],
            "source": "live" if i % 4 else "eval",
            "created_at": start + timedelta(minutes=37 * i),
            "input": f"q{i}",
            "output": f"a{i}",
        }
        if score is None and i % 7 == 3:
            out.append(ScoreFailure(error_type="TimeoutError", error_message="slow", **common))
        elif score is None and i % 7 == 5:
            out.append(ScoreSkipped(skip_reason="no_context", reason="-", **common))
        else:
            calls = [
                JudgeCall(
                    step="analyze", model="m", prompt_tokens=10 + i, completion_tokens=3, cost_usd=0.001
                )
            ]
            out.append(
                ScoreResult(
                    score=(i * 0.137) % 1 if score is None else score,
                    reason="r",
                    judge_calls=calls if i % 2 else [],
                    **common,
                )
            )
    return out


def _bucket(created: Any) -> str:
    if isinstance(created, str):
        return created[:13]
    return str(created.astimezone(UTC).strftime("%Y-%m-%dT%H"))


def _expected(rows: list[tuple[Any, ...]]) -> dict[tuple[str, ...], list[Any]]:
    """The rollup computed in Python from the score rows."""
    groups: dict[tuple[str, ...], list[Any]] = defaultdict(lambda: [0, 0, 0.0, 0.0, None, None, 0, 0.0, 0])
    for created, *keys, score, cost, prompt, completion in rows:
        g = groups[(_bucket(created), *(k or "" for k in keys))]
        g[0] += 1
        if score is not None:
            g[1] += 1
            g[2] += score
            g[3] += score * score
            g[4] = score if g[4] is None else min(g[4], score)
            g[5] = score if g[5] is None else max(g[5], score)
        if cost is not None:
            g[6] += 1
            g[7] += cost
        g[8] += (prompt or 0) + (completion or 0)
    return dict(groups)


def _histogram(rows: list[tuple[Any, ...]]) -> dict[tuple[Any, ...], int]:
    """The score histogram computed in Python from the score rows."""
    counts: dict[tuple[Any, ...], int] = defaultdict(int)
    for created, entity, scorer, source, _, _, _, score, *_ in rows:
        if score is not None:
            counts[(_bucket(created), entity or "", scorer, source or "", score_bin(score))] += 1
    return dict(counts)


def _check(rows: list[tuple[Any, ...]], rollup: list[tuple[Any, ...]], bins: list[tuple[Any, ...]]) -> None:
    assert {tuple(b[:-1]): b[-1] for b in bins} == _histogram(rows)
    assert len(bins) == len({tuple(b[:-1]) for b in bins})
    expected = _expected(rows)
    stored = {tuple(r[: len(KEY)]): list(r[len(KEY) :]) for r in rollup}
    assert set(stored) == set(expected)
    for key, want in expected.items():
        got = stored[key]
        assert got[0:2] == want[0:2] and got[6] == want[6] and got[8] == want[8], key
        assert got[4:6] == want[4:6], key
        for i in (2, 3, 7):
            assert math.isclose(got[i], want[i], abs_tol=1e-9), (key, i)


_State = tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]]]


def _sqlite_state(db: Path) -> _State:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(_SELECT_ROWS.format(table="agentevals_scores")).fetchall()
        rollup = conn.execute(_SELECT_ROLLUP.format(table="agentevals_rollup")).fetchall()
        bins = conn.execute(_SELECT_BINS.format(table="agentevals_bins")).fetchall()
    return rows, rollup, bins


async def test_sqlite_rollup_follows_inserts_resends_replacements_and_deletes(tmp_path: Path) -> None:
    db = tmp_path / "scores.db"
    records = _records(300)
    sink = SQLiteSink(db)
    await sink.write(records[:3])  # one bound statement
    await sink.write(records[3:])  # JSON statements
    rows, rollup, bins = _sqlite_state(db)
    assert len(rows) == 300
    _check(rows, rollup, bins)
    await sink.write(records)  # re-sent: nothing inserted, nothing added
    await sink.close()
    assert _sqlite_state(db)[1] == rollup
    force = SQLiteSink(db, on_conflict="replace")
    await force.write(_records(120, score=0.999))  # scores move; failures/skips become scores
    await force.close()
    rows, rollup, bins = _sqlite_state(db)
    assert len(rows) == 300 and sum(r[7] == 0.999 for r in rows) == 120
    _check(rows, rollup, bins)
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM agentevals_scores WHERE run_id IN ('run-0', 'run-150', 'run-299')")
        conn.execute("UPDATE agentevals_scores SET entity = 'moved' WHERE run_id = 'run-7'")
        conn.execute("UPDATE agentevals_scores SET score = 1.0 WHERE run_id = 'run-1'")  # the top bin
        conn.execute("UPDATE agentevals_scores SET score = 1.7 WHERE run_id = 'run-2'")  # clamped: 99
        conn.execute("UPDATE agentevals_scores SET score = -0.2 WHERE run_id = 'run-4'")  # clamped: 0
        conn.execute("UPDATE agentevals_scores SET score = NULL WHERE run_id = 'run-6'")  # not counted
    rows, rollup, bins = _sqlite_state(db)
    assert len(rows) == 297
    _check(rows, rollup, bins)


async def test_a_dropped_rollup_and_histogram_come_back_filled_from_the_rows(tmp_path: Path) -> None:
    db = tmp_path / "dropped.db"
    sink = SQLiteSink(db)
    await sink.write(_records(200))
    await sink.close()
    with sqlite3.connect(db) as conn:  # dropped by hand, triggers too
        conn.execute("DROP TABLE agentevals_rollup")
        conn.execute("DROP TABLE agentevals_bins")
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            conn.execute(f"DROP TRIGGER {name}")
        before = conn.execute("SELECT * FROM agentevals_scores ORDER BY id").fetchall()
    sink = SQLiteSink(db)
    await sink.write(_records(260)[200:])  # fills them from the rows, then writes through the triggers
    await sink.close()
    with sqlite3.connect(db) as conn:
        after = {row[0]: row for row in conn.execute("SELECT * FROM agentevals_scores")}
    assert all(after[row[0]] == row for row in before)
    rows, rollup, bins = _sqlite_state(db)
    assert len(rows) == 260
    _check(rows, rollup, bins)
    with sqlite3.connect(db) as conn:  # the versions table, kept, has its triggers back
        conn.execute("DELETE FROM agentevals_scores WHERE run_id IN ('run-0', 'run-1')")  # the first rows
        versions = conn.execute("SELECT scorer_id, scorer_version, first_at FROM agentevals_versions")
        firsts = conn.execute(
            "SELECT scorer_id, COALESCE(scorer_version, ''), MIN(created_at) FROM agentevals_scores "
            "GROUP BY 1, 2"
        )
        assert sorted(versions.fetchall()) == sorted(firsts.fetchall())


@pytest.fixture
async def pg_table(postgres: Any) -> AsyncIterator[tuple[str, str]]:
    import psycopg

    table = f"agentevals_rollup_{uuid.uuid4().hex[:12]}"
    yield postgres.conninfo, table
    async with await psycopg.AsyncConnection.connect(postgres.conninfo, autocommit=True) as conn:
        for name in (
            table,
            f"{table}_runs",
            f"{table}_meta",
            f"{table}_rollup",
            f"{table}_bins",
            f"{table}_versions",
            f"{table}_scorers",
            f"{table}_drops",
        ):
            await conn.execute(f"DROP TABLE IF EXISTS {name}")
        for event in ("insert", "update", "delete"):
            await conn.execute(f"DROP FUNCTION IF EXISTS {table}_rollup_{event}()")
            await conn.execute(f"DROP FUNCTION IF EXISTS {table}_bins_{event}()")
            await conn.execute(f"DROP FUNCTION IF EXISTS {table}_versions_{event}()")


async def _pg(conninfo: str, sql: str) -> list[tuple[Any, ...]]:
    import psycopg

    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        cursor = await conn.execute(sql)
        return list(await cursor.fetchall()) if cursor.description else []


async def _pg_state(conninfo: str, table: str) -> _State:
    rows = await _pg(conninfo, _SELECT_ROWS.format(table=table))
    rollup = await _pg(conninfo, _SELECT_ROLLUP.format(table=f"{table}_rollup"))
    bins = await _pg(conninfo, _SELECT_BINS.format(table=f"{table}_bins"))
    return rows, rollup, bins


async def test_postgres_rollup_follows_inserts_resends_replacements_and_deletes(
    pg_table: tuple[str, str],
) -> None:
    conninfo, table = pg_table
    records = _records(300)
    sink = PostgresSink(conninfo, table=table)
    await sink.write(records[:3])  # one INSERT
    await sink.write(records[3:])  # COPY
    rows, rollup, bins = await _pg_state(conninfo, table)
    assert len(rows) == 300
    _check(rows, rollup, bins)
    await sink.write(records)  # re-sent
    await sink.close()
    assert sorted((await _pg_state(conninfo, table))[1]) == sorted(rollup)
    force = PostgresSink(conninfo, table=table, on_conflict="replace")
    await force.write(_records(120, score=0.999))
    await force.close()
    rows, rollup, bins = await _pg_state(conninfo, table)
    assert len(rows) == 300 and sum(r[7] == 0.999 for r in rows) == 120
    _check(rows, rollup, bins)
    await _pg(conninfo, f"DELETE FROM {table} WHERE run_id IN ('run-0', 'run-150', 'run-299')")
    await _pg(conninfo, f"UPDATE {table} SET entity = 'moved' WHERE run_id = 'run-7'")
    await _pg(conninfo, f"UPDATE {table} SET score = 1.0 WHERE run_id = 'run-1'")  # the top bin
    await _pg(conninfo, f"UPDATE {table} SET score = 1.7 WHERE run_id = 'run-2'")  # clamped: 99
    await _pg(conninfo, f"UPDATE {table} SET score = -0.2 WHERE run_id = 'run-4'")  # clamped: 0
    await _pg(conninfo, f"UPDATE {table} SET score = NULL WHERE run_id = 'run-6'")  # not counted
    rows, rollup, bins = await _pg_state(conninfo, table)
    assert len(rows) == 297
    _check(rows, rollup, bins)


async def test_a_dropped_postgres_rollup_and_histogram_come_back_filled_from_the_rows(
    pg_table: tuple[str, str],
) -> None:
    conninfo, table = pg_table
    sink = PostgresSink(conninfo, table=table)
    await sink.write(_records(200))
    await sink.close()
    await _pg(conninfo, f"DROP TABLE {table}_rollup")  # dropped by hand, triggers too
    await _pg(conninfo, f"DROP TABLE {table}_bins")
    for event in ("insert", "update", "delete"):
        await _pg(conninfo, f"DROP TRIGGER {table}_rollup_{event} ON {table}")
        await _pg(conninfo, f"DROP TRIGGER {table}_bins_{event} ON {table}")
    before = await _pg(conninfo, f"SELECT * FROM {table} ORDER BY id")
    sink = PostgresSink(conninfo, table=table)
    await sink.write(_records(260)[200:])  # fills them from the rows, then writes through the triggers
    await sink.close()
    after = {r[0]: r for r in await _pg(conninfo, f"SELECT * FROM {table}")}
    assert len(after) == 260 and all(after[r[0]] == r for r in before)
    rows, rollup, bins = await _pg_state(conninfo, table)
    _check(rows, rollup, bins)


async def test_a_store_whose_histogram_was_dropped_gets_it_filled(tmp_path: Path) -> None:
    db = tmp_path / "scores.db"
    sink = SQLiteSink(db)
    await sink.write(_records(200))
    await sink.close()
    with sqlite3.connect(db) as conn:  # dropped by hand
        conn.execute("DROP TABLE agentevals_bins")
        for event in ("insert", "update", "delete"):
            conn.execute(f"DROP TRIGGER agentevals_bins_{event}")
    sink = SQLiteSink(db)
    await sink.write(_records(260)[200:])  # fills it, then writes through its triggers
    await sink.close()
    rows, rollup, bins = _sqlite_state(db)
    assert len(rows) == 260
    _check(rows, rollup, bins)


async def test_a_postgres_table_whose_histogram_was_dropped_gets_it_filled(
    pg_table: tuple[str, str],
) -> None:
    conninfo, table = pg_table
    sink = PostgresSink(conninfo, table=table)
    await sink.write(_records(200))
    await sink.close()
    await _pg(conninfo, f"DROP TABLE {table}_bins")
    for event in ("insert", "update", "delete"):
        await _pg(conninfo, f"DROP TRIGGER {table}_bins_{event} ON {table}")
    sink = PostgresSink(conninfo, table=table)
    await sink.write(_records(260)[200:])
    await sink.close()
    rows, rollup, bins = await _pg_state(conninfo, table)
    assert len(rows) == 260
    _check(rows, rollup, bins)
