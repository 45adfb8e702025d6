"""The versions table the database keeps with triggers holds, per (scorer, version), the earliest
``created_at`` of its score rows after batches (bound, JSON, COPY), records that arrive out of order,
re-sent batches, replacements (``on_conflict="replace"``, as a replay or ``rescore --force``), updates
and deletes, in SQLite (a real file) and PostgreSQL (the real server); the viewer's version starts are
read from it."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agentevals import ScoreRecord, ScoreResult
from agentevals._store._row import tables
from agentevals._store._schema_check import store_tables
from agentevals._store._store import open_store
from agentevals._store._view_reads import version_starts
from agentevals.results import ScoreFailure
from agentevals.sinks import PostgresSink, SQLiteSink

START = datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
VERSIONS = ("1", "2", None)


def _record(i: int, *, minutes: int | None = None, score: float = 0.5) -> ScoreRecord:
    """Record ``i``: one of two scorers, one of three versions (one none), ``minutes`` after the start
    (by default a spread that is not in ``i``'s order); every seventh a failure."""
    common: dict[str, Any] = {
        "scorer_id": f"scorer-{i % 2}",
        "scorer_name": "s",
        "scorer_version": VERSIONS[i // 2 % 3],
        "run_id": f"run-{i}",
        "created_at": START + timedelta(minutes=(i * 37) % 500 if minutes is None else minutes),
    }
    if i % 7 == 3:
        return ScoreFailure(error_type="TimeoutError", error_message="slow", **common)
    return ScoreResult(score=score, reason="r", **common)


@dataclass
class Target:
    """A store of one kind of database, its scores table named ``table``."""

    kind: str
    address: str
    table: str

    def sink(self, **options: Any) -> SQLiteSink | PostgresSink:
        if self.kind == "sqlite":
            return SQLiteSink(self.address, table=self.table, **options)
        return PostgresSink(self.address, table=self.table, **options)

    async def write(self, records: list[ScoreRecord], **options: Any) -> None:
        sink = self.sink(**options)
        await sink.write(records)
        await sink.close()

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        if self.kind == "sqlite":
            with sqlite3.connect(self.address) as conn:
                return conn.execute(sql).fetchall()
        import psycopg

        with psycopg.connect(self.address, autocommit=True) as conn:
            cursor = conn.execute(sql)
            return cursor.fetchall() if cursor.description else []

    def stored(self) -> dict[tuple[str, str], Any]:
        """The versions table."""
        found = self.rows(f"SELECT scorer_id, scorer_version, first_at FROM {tables(self.table).versions}")
        assert len(found) == len({(s, v) for s, v, _ in found})
        return {(s, v): first for s, v, first in found}

    def expected(self) -> dict[tuple[str, str], Any]:
        """``MIN(created_at)`` per (scorer, version) of the score rows, computed in Python."""
        firsts: dict[tuple[str, str], Any] = {}
        for scorer, version, created in self.rows(
            f"SELECT scorer_id, scorer_version, created_at FROM {self.table}"
        ):
            key = (scorer, version or "")
            firsts[key] = created if key not in firsts else min(firsts[key], created)
        return firsts


@pytest.fixture(params=["sqlite", "postgres"])
async def target(request: pytest.FixtureRequest, tmp_path: Any) -> AsyncIterator[Target]:
    if request.param == "sqlite":
        yield Target("sqlite", str(tmp_path / "scores.db"), "agentevals_scores")
        return
    found = Target("postgres", request.getfixturevalue("postgres").url, f"versions_{uuid.uuid4().hex[:12]}")
    yield found
    found.rows(
        "; ".join(f"DROP TABLE IF EXISTS {name} CASCADE" for name in store_tables(tables(found.table)))
    )
    names = tables(found.table)
    sides = (names.rollup, names.bins, names.versions)
    events = ("insert", "update", "delete")
    found.rows("; ".join(f"DROP FUNCTION IF EXISTS {side}_{event}()" for side in sides for event in events))


async def test_the_versions_table_follows_batches_out_of_order_records_and_resends(target: Target) -> None:
    records = [_record(i) for i in range(300)]
    by_time = sorted(records, key=lambda r: r.created_at)
    await target.write(by_time[-3:])  # one bound statement / one INSERT
    assert target.stored() == target.expected()
    await target.write(records[100:250])  # JSON rows / COPY, not in time order
    assert target.stored() == target.expected()
    await target.write(by_time)  # the earliest first, then later rows that must not move it
    stored = target.stored()
    assert stored == target.expected() and len(stored) == 6
    assert ("scorer-0", "") in stored  # no version: ''
    await target.write(records)  # re-sent: nothing inserted, nothing changed
    assert target.stored() == stored


async def test_a_replaced_first_row_moves_its_versions_first_moment(target: Target) -> None:
    await target.write([_record(i) for i in range(120)])
    firsts = target.expected()
    first = min(
        (i for i in range(120) if _record(i).scorer_id == "scorer-0" and _record(i).scorer_version == "1"),
        key=lambda i: _record(i).created_at,
    )
    later = _record(first, minutes=10_000, score=0.9)  # the same record (same id) created later
    await target.write([later], on_conflict="replace")
    moved = target.stored()
    assert moved == target.expected()
    assert moved[("scorer-0", "1")] > firsts[("scorer-0", "1")]
    assert {k: v for k, v in moved.items() if k != ("scorer-0", "1")} == {
        k: v for k, v in firsts.items() if k != ("scorer-0", "1")
    }
    await target.write([_record(first, minutes=-60)], on_conflict="replace")  # then earlier than all
    assert target.stored() == target.expected()
    assert target.stored()[("scorer-0", "1")] < firsts[("scorer-0", "1")]


async def test_updates_and_deletes_move_or_remove_a_version(target: Target) -> None:
    await target.write([_record(i) for i in range(120)])
    table = target.table
    target.rows(f"DELETE FROM {table} WHERE scorer_id = 'scorer-1' AND scorer_version = '2'")
    assert ("scorer-1", "2") not in target.stored()
    target.rows(
        f"DELETE FROM {table} WHERE id = (SELECT id FROM {table} WHERE scorer_id = 'scorer-0' "
        "AND scorer_version IS NULL ORDER BY created_at LIMIT 1)"
    )
    target.rows(f"UPDATE {table} SET scorer_version = '3' WHERE run_id IN ('run-0', 'run-8')")
    target.rows(f"UPDATE {table} SET scorer_id = 'scorer-9' WHERE run_id = 'run-1'")
    stored = target.stored()
    assert stored == target.expected()
    assert ("scorer-0", "3") in stored and ("scorer-9", "1") in stored and ("scorer-1", "2") not in stored


async def test_the_viewers_version_starts_come_from_the_versions_table(target: Target) -> None:
    await target.write([_record(i) for i in range(60)])
    versions = tables(target.table).versions
    with open_store(target.address, table=target.table) as store:
        starts = sorted(version_starts(store.reading), key=lambda s: (s[0], s[1] or ""))
    expected = target.expected()
    assert [(s, v or "") for s, v, _ in starts] == sorted(expected)
    assert all(version in ("1", "2", None) for _, version, _ in starts)  # no version: None again
    for scorer, version, first in starts:
        want = expected[(scorer, version or "")]
        assert datetime.fromisoformat(first) == (
            want if isinstance(want, datetime) else datetime.fromisoformat(want)
        )
    moment = "'2020-01-01T00:00:00+00:00'"
    target.rows(
        f"UPDATE {versions} SET first_at = {moment} WHERE scorer_id = 'scorer-1' AND scorer_version = '2'"
    )
    with open_store(target.address, table=target.table) as store:
        found = {(s, v): first for s, v, first in version_starts(store.reading)}
    assert found[("scorer-1", "2")] == "2020-01-01T00:00:00+00:00"
