"""End to end: a LangChain agent with ``ScoringMiddleware`` and ``ScoringEngine(broker=...)`` in this
process, ``agentevals worker`` in another, records and runs in SQLite and in PostgreSQL, through the
real RabbitMQ and the real Redis."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agentevals_langchain import ScoringMiddleware
from agentevals_langchain.testing import ScriptedChatModel
from langchain.agents import create_agent
from worker_helpers import (  # noqa: F401  (fixtures)
    LENGTH_RANGE,
    SCORERS,
    broker_url,
    queue,
    run_ids,
    score_rows,
    start_worker,
    stop,
    wait_until,
)

from agentevals import ScoringEngine
from agentevals._store._row import TABLE, tables
from agentevals._store._schema_check import store_tables
from agentevals.engine import BrokerOptions


@pytest.fixture
def default_pg_store(postgres: Any) -> Iterator[str]:
    """The worker's PostgreSQL sink writes to the default table: the test starts without that store
    (whatever an earlier run left) and removes it after."""
    import psycopg

    def drop() -> None:
        with psycopg.connect(postgres.url, autocommit=True) as conn:
            for name in store_tables(tables(TABLE)):
                conn.execute(f"DROP TABLE IF EXISTS {name} CASCADE")

    drop()
    yield postgres.url
    drop()


def _pg_rows(url: str, run_ids: list[str]) -> tuple[list[tuple[str, str, str, float | None]], int]:
    """The score rows of ``run_ids`` in PostgreSQL, and how many of those runs have a runs row."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT run_id, scorer_id, outcome, score FROM agentevals_scores WHERE run_id = ANY(%s)",
            (run_ids,),
        ).fetchall()
        runs = conn.execute(
            "SELECT count(*) FROM agentevals_runs WHERE run_id = ANY(%s)", (run_ids,)
        ).fetchone()
    assert runs is not None
    return rows, runs[0]


def test_agent_to_worker_to_sqlite_and_postgres(
    broker_url: str,  # noqa: F811
    queue: str,  # noqa: F811
    default_pg_store: str,
    tmp_path: Path,
) -> None:
    db = tmp_path / "scores.db"
    worker = start_worker(broker_url, queue, db, "--sink", default_pg_store, threads=4)
    engine = ScoringEngine({"length": SCORERS["length"], "shout": SCORERS["shout"]},
                           broker=BrokerOptions(broker_url, queue=queue))  # fmt: skip
    agent = create_agent(
        ScriptedChatModel(respond=lambda messages: "SUNNY IN PARIS"),
        tools=[],
        system_prompt="You are a weather assistant.",
        middleware=[ScoringMiddleware(engine=engine)],
        name="weather",
    )
    ids = [uuid.uuid4() for _ in range(5)]
    try:
        for run_id in ids:
            agent.invoke({"messages": [{"role": "user", "content": "Paris?"}]}, config={"run_id": run_id})
        engine.flush()
        wait_until(lambda: len(score_rows(db)) == 10)

        # Polled: the worker may still be writing to PostgreSQL when SQLite holds every record.
        def stored_in_postgres() -> bool:
            rows, runs = _pg_rows(default_pg_store, [str(i) for i in ids])
            return (len(rows), runs) == (10, 5)

        wait_until(stored_in_postgres, what="the PostgreSQL rows")
    finally:
        engine.shutdown()
        output = stop(worker)
    expected = {(str(i), key, "scored") for i in ids for key in ("length", "shout")}
    assert set(score_rows(db)) == expected, output
    assert sorted(run_ids(db)) == sorted(str(i) for i in ids)
    pg, pg_runs = _pg_rows(default_pg_store, [str(i) for i in ids])
    assert pg_runs == len(ids)
    assert {(r[0], r[1], r[2]) for r in pg} == expected
    assert {(r[1], r[3]) for r in pg} == {("length", len("SUNNY IN PARIS") / LENGTH_RANGE), ("shout", 1.0)}
