"""Schema version 2 adds the labels table and the versions table. A new store is version 2; a store of
version 1 (made here with the statements that release ran, ``v1_store_*.sql``) gains both when it is
opened, in one transaction, the versions table filled from its score rows, and keeps every other table
and row as they were; a version-2 store made without the versions table gains it the same way; a newer
store is still refused. SQLite (a real file) and PostgreSQL (the real server)."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentevals._store import _sqlite_schema
from agentevals._store._row import SCHEMA_VERSION, tables
from agentevals._store._schema_check import store_tables
from agentevals._store._store import open_store
from agentevals.evals import Labels
from agentevals.sinks import SinkConfigError
from agentevals.sinks._open import sink_for

HERE = Path(__file__).parent
#: Score rows, their runs row and a catalog row, as a version-1 store held them.
ROWS = [
    "INSERT INTO {base}_runs (run_id, created_at, entity, source, input) "
    "VALUES ('r1', '2026-01-02T03:04:05+00:00', 'bot', 'live', '\"hi\"')",
    "INSERT INTO {base}_scores (id, created_at, run_id, scorer_id, scorer_name, scorer_version, outcome, "
    "score, entity, source, metadata) VALUES ('id1', '2026-01-02T03:04:05+00:00', 'r1', 'helpfulness', "
    "'Helpfulness', 'v1', 'scored', 0.75, 'bot', 'live', '{{}}')",
    "INSERT INTO {base}_scores (id, created_at, run_id, scorer_id, scorer_name, scorer_version, outcome, "
    "score, entity, source, metadata) VALUES ('id2', '2026-01-01T00:00:00+00:00', 'r1', 'helpfulness', "
    "'Helpfulness', 'v1', 'scored', 0.5, 'bot', 'live', '{{}}')",
    "INSERT INTO {base}_scores (id, created_at, run_id, scorer_id, scorer_name, scorer_version, outcome, "
    "score, entity, source, metadata) VALUES ('id3', '2026-01-03T00:00:00+00:00', 'r1', 'helpfulness', "
    "'Helpfulness', NULL, 'scored', 0.25, 'bot', 'live', '{{}}')",
    "INSERT INTO {base}_scorers (scorer_id, scorer_version, source, eval_id, step, scorer_name, "
    "threshold_min, updated_at) VALUES ('helpfulness', 'v1', 'live', '', '', 'Helpfulness', 0.7, "
    "'2026-01-02T03:04:05+00:00')",
]


class Database:
    """One kind of database, holding a store whose tables start with ``base``."""

    def __init__(self, kind: str, address: str, base: str) -> None:
        self.kind, self.address, self.base = kind, address, base
        self.table = f"{base}_scores"

    def run(self, statements: list[str]) -> None:
        if self.kind == "sqlite":
            with sqlite3.connect(self.address) as conn:
                for statement in statements:
                    conn.execute(statement)
            return
        import psycopg

        with psycopg.connect(self.address, autocommit=True) as conn:
            for statement in statements:
                conn.execute(statement)

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        if self.kind == "sqlite":
            with sqlite3.connect(self.address) as conn:
                return conn.execute(sql).fetchall()
        import psycopg

        with psycopg.connect(self.address, autocommit=True) as conn:
            return conn.execute(sql).fetchall()

    def make_version_1(self) -> None:
        """The store as version 1 created it, with a few rows."""
        script = (HERE / f"v1_store_{self.kind}.sql").read_text().replace("v1base", self.base)
        if self.kind == "sqlite":
            with sqlite3.connect(self.address) as conn:
                conn.executescript(script)
        else:
            self.run([script])
        self.run([row.format(base=self.base) for row in ROWS])

    def layout(self) -> list[tuple[Any, ...]]:
        """Every table, index and trigger of the store but the labels and versions tables', with its
        definition."""
        if self.kind == "sqlite":
            found = self.rows("SELECT type, name, sql FROM sqlite_master ORDER BY name")
        else:
            found = self.rows(
                "SELECT 'column', table_name || '.' || column_name, data_type "
                f"FROM information_schema.columns WHERE table_name LIKE '{self.base}%' "
                "UNION ALL SELECT 'index', indexname, indexdef "
                f"FROM pg_indexes WHERE tablename LIKE '{self.base}%' "
                "UNION ALL SELECT 'trigger', tgname, pg_get_triggerdef(oid) "
                f"FROM pg_trigger WHERE tgname LIKE '{self.base}%' ORDER BY 1, 2"
            )
        added = (f"{self.base}_labels", f"{self.base}_versions")
        return [row for row in found if not any(name in row[1] for name in added)]

    def contents(self) -> dict[str, list[tuple[Any, ...]]]:
        """The rows of every table but the labels, versions and meta tables (the meta table records the
        version)."""
        names = tables(self.table)
        return {
            name: sorted(self.rows(f"SELECT * FROM {name}"), key=repr)
            for name in store_tables(names)
            if name not in (names.labels, names.versions, names.meta)
        }

    def versions(self) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """The versions table, and what it should hold: ``MIN(created_at)`` per (scorer, version)."""
        names = tables(self.table)
        return (
            sorted(self.rows(f"SELECT scorer_id, scorer_version, first_at FROM {names.versions}")),
            sorted(
                self.rows(
                    f"SELECT scorer_id, COALESCE(scorer_version, ''), MIN(created_at) FROM {names.scores} "
                    "GROUP BY 1, 2"
                )
            ),
        )

    def drop_versions(self) -> None:
        """Drop the versions table and its triggers, as a version-2 store made before them was."""
        on = "" if self.kind == "sqlite" else f" ON {self.table}"
        events = ("insert", "update", "delete")
        self.run([*(f"DROP TRIGGER {self.base}_versions_{event}{on}" for event in events)])
        self.run([f"DROP TABLE {self.base}_versions"])

    def version(self) -> str:
        return str(self.rows(f"SELECT value FROM {self.base}_meta WHERE key = 'schema_version'")[0][0])


@pytest.fixture(params=["sqlite", "postgres"])
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Database]:
    base = f"agentevals_up_{uuid.uuid4().hex[:10]}"
    if request.param == "sqlite":
        yield Database("sqlite", str(tmp_path / "store.db"), base)
        return
    found = Database("postgres", request.getfixturevalue("postgres").url, base)
    yield found
    found.run([f"DROP TABLE IF EXISTS {name} CASCADE" for name in store_tables(tables(found.table))])
    found.run([f"DROP VIEW IF EXISTS {base}_labels"])
    found.run(
        [
            f"DROP FUNCTION IF EXISTS {base}_{name}_{event}()"
            for name in ("rollup", "bins", "versions")
            for event in ("insert", "update", "delete")
        ]
    )


async def test_a_new_store_is_version_2_with_labels_and_versions_tables(database: Database) -> None:
    sink = sink_for(database.address, table=database.table)
    sink.check()
    await sink.close()
    assert SCHEMA_VERSION == 2 and database.version() == "2"
    assert database.rows(f"SELECT COUNT(*) FROM {database.base}_labels") == [(0,)]
    assert database.rows(f"SELECT COUNT(*) FROM {database.base}_versions") == [(0,)]


def test_a_version_1_store_gains_the_labels_and_versions_tables_when_opened_and_keeps_the_rest(
    database: Database,
) -> None:
    database.make_version_1()
    layout, contents = database.layout(), database.contents()
    assert database.version() == "1" and contents[f"{database.base}_rollup"]  # the triggers ran
    with open_store(database.address, table=database.table) as store:
        assert [run.run_id for run in store.runs()] == ["r1"]
    assert database.version() == "2"
    assert database.layout() == layout
    assert database.contents() == contents
    stored, expected = database.versions()
    assert stored == expected and len(stored) == 2  # filled from the rows: 'v1' and no version
    with Labels(database.address, table=database.table) as labels:
        labels.add("r1", "helpfulness", "pass", labeller="ann")
        assert [label.run_id for label in labels.list()] == ["r1"]
    index = f"{database.base}_labels_name_run_idx"
    if database.kind == "sqlite":
        assert database.rows(f"SELECT name FROM sqlite_master WHERE name = '{index}'") == [(index,)]
    else:
        assert database.rows(f"SELECT indexname FROM pg_indexes WHERE indexname = '{index}'") == [(index,)]


@pytest.mark.parametrize("opener", ["sink", "reader"])
async def test_a_version_2_store_without_the_versions_table_gains_it_filled_when_opened(
    database: Database, opener: str
) -> None:
    sink = sink_for(database.address, table=database.table)
    sink.check()
    await sink.close()
    database.run([row.format(base=database.base) for row in ROWS])
    database.drop_versions()
    contents = database.contents()
    if opener == "sink":
        sink = sink_for(database.address, table=database.table)
        sink.check()
        await sink.close()
    else:
        open_store(database.address, table=database.table).close()
    stored, expected = database.versions()
    assert stored == expected and len(stored) == 2
    assert database.contents() == contents and database.version() == "2"
    database.run(  # its triggers are back: an earlier row moves the version's first moment
        [
            f"INSERT INTO {database.table} (id, created_at, run_id, scorer_id, scorer_version, outcome) "
            "VALUES ('id4', '2025-12-31T00:00:00+00:00', 'r1', 'helpfulness', 'v1', 'skipped')"
        ]
    )
    stored, expected = database.versions()
    firsts = {(scorer, version): first for scorer, version, first in stored}
    assert stored == expected and str(firsts[("helpfulness", "v1")]).startswith("2025-12-31")


def test_a_version_2_file_without_the_versions_table_that_cannot_be_written_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = Database("sqlite", str(tmp_path / "store.db"), "agentevals")
    sink_for(database.address).check()
    database.drop_versions()

    def read_only(*args: object) -> None:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(_sqlite_schema, "ensure_schema", read_only)
    with pytest.raises(ValueError, match=r"has no agentevals_versions table and could not be given one"):
        open_store(database.address, read_only=True)


def test_an_upgrade_that_fails_leaves_the_store_at_version_1(database: Database) -> None:
    database.make_version_1()
    # A view where the labels table goes: the table is skipped, its index fails, the upgrade rolls back.
    database.run([f"CREATE VIEW {database.base}_labels AS SELECT run_id AS name FROM {database.base}_runs"])
    with pytest.raises(Exception):  # noqa: B017 - the database's own error (SQLite or psycopg)
        open_store(database.address, table=database.table)
    assert database.version() == "1"


def test_a_newer_store_is_refused(database: Database) -> None:
    database.make_version_1()
    database.run([f"UPDATE {database.base}_meta SET value = '3' WHERE key = 'schema_version'"])
    with pytest.raises(SinkConfigError, match="holds schema version 3, newer than this agentevals"):
        open_store(database.address, table=database.table)
    assert database.version() == "3"


def test_a_version_1_file_that_cannot_be_written_says_how_to_upgrade_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = Database("sqlite", str(tmp_path / "store.db"), "agentevals")
    database.make_version_1()

    def read_only(*args: object) -> None:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(_sqlite_schema, "ensure_schema", read_only)
    upgrade = r"schema version 1 and could not be upgraded to 2 \(attempt to write a readonly database\)"
    with pytest.raises(ValueError, match=upgrade):
        open_store(database.address, read_only=True)
    assert database.version() == "1"
