"""Permanent sink errors (missing driver, unknown database or role, unwritable path) are not retried, and
every sink's ``check()`` reports them up front with the fix."""

from __future__ import annotations

import asyncio
import errno
import logging
import sqlite3
import sys
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from sink_helpers import sample_records

from agentevals import Run, ScoreRecord, ScoringEngine, create_scorer
from agentevals._store._row import SCHEMA_VERSION, tables
from agentevals._store._schema_check import store_tables
from agentevals.cli import main
from agentevals.engine import DeliveryOptions, ExitOptions
from agentevals.sinks import (
    CallbackSink,
    JsonlSink,
    LoggingSink,
    MemorySink,
    PostgresSink,
    RetryPolicy,
    SinkConfigError,
    SQLiteSink,
    is_permanent,
)
from agentevals.sinks._retry import retried, write_once


def _sqlite_error(message: str, code: int) -> sqlite3.Error:
    err = sqlite3.OperationalError(message)
    err.sqlite_errorcode = code  # type: ignore[attr-defined]
    return err


PERMANENT = [
    ModuleNotFoundError("No module named 'psycopg'"),
    PermissionError(errno.EACCES, "Permission denied"),
    OSError(errno.EROFS, "Read-only file system"),
    NotADirectoryError(errno.ENOTDIR, "Not a directory"),
    _sqlite_error("attempt to write a readonly database", 8),
    _sqlite_error("unable to open database file", 14),
    SinkConfigError("database 'x' does not exist"),
]
TRANSIENT = [
    ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"),
    ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"),
    TimeoutError("timed out"),
    OSError(errno.ENOSPC, "No space left on device"),
    _sqlite_error("database is locked", 5),
    SinkConfigError("server unreachable", transient=True),
    RuntimeError("boom"),
]


@pytest.mark.parametrize("error", PERMANENT, ids=repr)
def test_permanent_errors(error: BaseException) -> None:
    assert is_permanent(error)


@pytest.mark.parametrize("error", TRANSIENT, ids=repr)
def test_transient_errors(error: BaseException) -> None:
    assert not is_permanent(error)


class FailingSink:
    name = "failing"

    def __init__(self, error: BaseException) -> None:
        self.error = error
        self.attempts = 0

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        self.attempts += 1
        raise self.error

    async def close(self) -> None:
        return None


def _engine(sink: Any, tmp_path: Path, attempts: int = 4) -> ScoringEngine:
    scorer = create_scorer(id="one").generate_score(lambda run, **_: 1.0)
    return ScoringEngine(
        [scorer],
        sinks=[sink],
        delivery=DeliveryOptions(
            retry=RetryPolicy(attempts=attempts, initial=0.3, max_wait=0.3),
            dead_letter=tmp_path / "dead.jsonl",
        ),
        exit=ExitOptions(handle_sigterm=False),
    )


@pytest.mark.parametrize("error", PERMANENT[:3], ids=repr)
def test_engine_dead_letters_a_permanent_error_at_once_with_one_error_log(
    error: BaseException, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sink = FailingSink(error)
    engine = _engine(sink, tmp_path)
    started = time.perf_counter()
    with caplog.at_level(logging.INFO, logger="agentevals"):
        for i in range(3):
            engine.submit(Run(run_id=f"r{i}", output="x"))
        report = engine.flush(timeout=10)
        engine.shutdown()
    assert time.perf_counter() - started < 0.9  # no backoff waits (3 x 0.3 s)
    assert sink.attempts == 1  # one batch, one attempt, no isolation by halves
    assert report.dead_lettered == 3 and not report
    assert len((tmp_path / "dead.jsonl").read_text().splitlines()) == 3
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert "not retried" in errors[0].getMessage() and str(error) in errors[0].getMessage()
    assert not any("will retry" in r.getMessage() for r in caplog.records)


def test_engine_still_retries_a_transient_error(tmp_path: Path) -> None:
    sink = FailingSink(ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"))
    engine = _engine(sink, tmp_path, attempts=3)
    engine.submit(Run(run_id="r", output="x"))
    report = engine.shutdown(timeout=10)
    assert sink.attempts == 3 and report.dead_lettered == 1


async def test_retried_stops_at_a_permanent_error() -> None:
    sink = FailingSink(ModuleNotFoundError("No module named 'psycopg'"))
    records = sample_records(1)
    error = await retried(lambda: write_once(sink, records, None), RetryPolicy(attempts=5, initial=0.5))
    assert isinstance(error, ModuleNotFoundError) and sink.attempts == 1


# -- check() and the sinks' own permanent errors -----------------------------------------------------


def test_sinks_without_configuration_check_cleanly() -> None:
    for sink in (MemorySink(), LoggingSink(), CallbackSink(print)):
        sink.check()


def test_file_sinks_check_and_fail_permanently_on_an_unwritable_path(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    blocked = tmp_path / "a-file" / "sub"
    good_db, good_jsonl = SQLiteSink(tmp_path / "new" / "x.db"), JsonlSink(tmp_path / "new" / "x.jsonl")
    good_db.check()
    good_jsonl.check()
    assert not (tmp_path / "new" / "x.jsonl").exists()  # check() leaves no file behind
    for sink in (SQLiteSink(blocked / "x.db"), JsonlSink(blocked / "x.jsonl")):
        with pytest.raises(SinkConfigError, match="a directory this process can write"):
            sink.check()
        with pytest.raises(SinkConfigError) as info:
            asyncio.run(sink.write(sample_records(1)))
        assert is_permanent(info.value)
        asyncio.run(sink.close())


def test_sqlite_check_refuses_a_table_of_another_shape(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "other.db") as conn:
        conn.execute("CREATE TABLE agentevals_scores (id TEXT, something TEXT)")
    with pytest.raises(SinkConfigError, match="something else made these tables"):
        SQLiteSink(tmp_path / "other.db").check()


def test_sqlite_read_only_database_is_permanent(tmp_path: Path) -> None:
    SQLiteSink(tmp_path / "ro.db").check()
    sink = SQLiteSink(tmp_path / "ro.db")
    sink._connect = lambda: sqlite3.connect(  # type: ignore[method-assign]
        f"file:{tmp_path / 'ro.db'}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
    )
    with pytest.raises(sqlite3.OperationalError) as info:
        asyncio.run(sink.write(sample_records(1)))
    assert is_permanent(info.value)


def test_postgres_without_psycopg_fails_check_and_writes_permanently(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # `import psycopg` raises ImportError
    sink = PostgresSink("host=127.0.0.1 dbname=test")
    with pytest.raises(SinkConfigError, match=r"pip install 'agentevals-core\[postgres\]'"):
        sink.check()
    with pytest.raises(SinkConfigError) as info:
        asyncio.run(sink.write(sample_records(1)))
    assert is_permanent(info.value)


def test_postgres_unreachable_server_fails_check_as_transient() -> None:
    pytest.importorskip("psycopg")
    sink = PostgresSink("host=127.0.0.1 port=1 dbname=test user=postgres", connect_timeout=1)
    with pytest.raises(SinkConfigError, match="is the server running") as info:
        sink.check()
    assert info.value.transient and not is_permanent(info.value)


@pytest.mark.parametrize(
    ("change", "fix"),
    [("dbname=no_such_db_agentevals", "createdb"), ("user=no_such_role_agentevals", "CREATE ROLE")],
)
def test_postgres_unknown_database_or_role_is_permanent(change: str, fix: str, postgres: Any) -> None:
    conninfo = postgres.conninfo
    key = change.split("=")[0]
    bad = " ".join(change if part.startswith(f"{key}=") else part for part in conninfo.split())
    sink = PostgresSink(bad)
    with pytest.raises(SinkConfigError, match=fix) as info:
        sink.check()
    assert not info.value.transient
    with pytest.raises(SinkConfigError) as info:
        asyncio.run(sink.write(sample_records(1)))
    assert is_permanent(info.value) and fix in str(info.value)


def test_postgres_check_passes_and_creates_the_table(postgres: Any) -> None:
    import psycopg

    conninfo = postgres.conninfo
    table = f"agentevals_check_{uuid.uuid4().hex[:12]}"
    try:
        PostgresSink(conninfo, table=table).check()
        with psycopg.connect(conninfo, autocommit=True) as conn:
            assert conn.execute(f"SELECT value FROM {table}_meta").fetchall() == [(str(SCHEMA_VERSION),)]
    finally:
        t = tables(table)
        with psycopg.connect(conninfo, autocommit=True) as conn:
            for name in store_tables(t):
                conn.execute(f"DROP TABLE IF EXISTS {name} CASCADE")


# -- the CLI ---------------------------------------------------------------------------------------


def test_cli_eval_and_replay_exit_2_when_the_db_cannot_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-file").write_text("")
    db = str(tmp_path / "a-file" / "x.db")
    (tmp_path / "data.jsonl").write_text('{"input": "a"}\n')
    (tmp_path / "dead.jsonl").write_text("")
    code = main([
        "eval", str(tmp_path / "data.jsonl"), "--target", "builtins:str", "--scorer", "exact_match",
        "--db", db, "--no-progress",
    ])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "--db: SQLiteSink cannot write" in err and "can write" in err
    assert main(["replay", str(tmp_path / "dead.jsonl"), "--db", db]) == 2
    assert "--db: SQLiteSink cannot write" in capsys.readouterr().err
