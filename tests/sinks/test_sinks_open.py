"""The sink of a store's address (``agentevals eval --db``, ``replay``) and the writer of an opened store
(``rescore``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentevals import ScoreResult
from agentevals._store._store import open_store
from agentevals.sinks import JsonlSink, PostgresSink, SinkConfigError, SQLiteSink
from agentevals.sinks._open import sink_for, store_writer
from agentevals.sinks._sqlite_process import SQLiteProcessWriter


def test_the_address_chooses_the_sink(tmp_path: Path) -> None:
    postgres = sink_for("postgresql://127.0.0.1/test", table="evals")
    assert isinstance(postgres, PostgresSink) and postgres.table == "evals"
    assert isinstance(sink_for(tmp_path / "scores.jsonl"), JsonlSink)
    sqlite = sink_for(tmp_path / "scores.db")
    assert isinstance(sqlite, SQLiteSink) and sqlite.table == "agentevals_scores"
    assert sqlite.store_runs == "sampled" and sqlite.on_conflict == "keep"
    with pytest.raises(ValueError, match="invalid table name 'select'"):
        sink_for(tmp_path / "scores.db", table="select")


async def test_a_store_writer_writes_scores_only_and_replaces_when_told(tmp_path: Path) -> None:
    path = tmp_path / "scores.db"
    sink = SQLiteSink(path, table="evals")
    await sink.write([ScoreResult(scorer_id="a", scorer_name="a", run_id="r", score=0.5)])
    await sink.close()
    with open_store(path, table="evals") as store:
        keeping, replacing = store_writer(store), store_writer(store, replace=True)
        assert isinstance(keeping, SQLiteSink) and isinstance(replacing, SQLiteSink)
        assert (keeping.table, keeping.store_runs, keeping.on_conflict) == ("evals", "none", "keep")
        assert replacing.on_conflict == "replace"
        bulk = store_writer(store, replace=True, bulk=True)
        assert isinstance(bulk, SQLiteProcessWriter) and bulk.table == "evals"
        for writer in (keeping, replacing, bulk):
            await writer.close()
    journal = tmp_path / "scores.jsonl"
    lines = JsonlSink(journal)
    await lines.write([ScoreResult(scorer_id="a", scorer_name="a", run_id="r", score=0.5)])
    await lines.close()
    with open_store(journal) as store:
        assert isinstance(store_writer(store, replace=True, bulk=True), JsonlSink)


def test_the_stores_configuration_error_is_the_sinks() -> None:
    from agentevals._store._errors import SinkConfigError as StoreConfigError

    assert SinkConfigError is StoreConfigError and issubclass(SinkConfigError, ValueError)
