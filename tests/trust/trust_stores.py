"""Helpers of the trust tests: writing records to a store, a store of labelled runs, and dropping a PostgreSQL
store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentevals import ScoreResult
from agentevals._store._catalog_tables import ScorerInfo
from agentevals._store._row import tables
from agentevals._store._schema_check import store_tables
from agentevals.evals import Labels
from agentevals.results import ScoreRecord
from agentevals.sinks._open import sink_for

#: Ten runs: six good answers, four bad ones.
LABELLED_RUNS = [(f"r{n}", "a good answer" if n < 6 else "a bad answer") for n in range(10)]


async def drop_postgres_store(url: str, table: str) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        for name in store_tables(tables(table)):
            await conn.execute(f"DROP TABLE IF EXISTS {name} CASCADE")
        for name in ("rollup", "bins"):
            for event in ("insert", "update", "delete"):
                await conn.execute(f"DROP FUNCTION IF EXISTS {tables(table).runs[:-5]}_{name}_{event}()")


async def write(
    address: str, table: str, records: Sequence[ScoreRecord], scorers: Sequence[ScorerInfo] = ()
) -> None:
    """Store ``records`` (and the catalog rows ``scorers``) through the store's own sink."""
    sink: Any = sink_for(address, table=table)
    try:
        await sink.write(list(records))
        if scorers:
            await sink.write_scorers(list(scorers))
    finally:
        await sink.close()


async def write_labelled_runs(address: str, table: str) -> None:
    """Store :data:`LABELLED_RUNS`, each scored 1.0 by ``helpfulness`` version ``live-1`` (live) and labelled
    by ann: pass for a good answer, fail for a bad one."""
    records = [
        ScoreResult(
            scorer_id="helpfulness",
            scorer_name="helpfulness",
            scorer_version="live-1",
            run_id=run_id,
            input=f"question about {run_id}",
            output=output,
            score=1.0,
            source="live",
        )
        for run_id, output in LABELLED_RUNS
    ]
    await write(address, table, records)
    with Labels(address, table=table) as labels:
        for run_id, output in LABELLED_RUNS:
            labels.add(run_id, "helpfulness", "pass" if "good" in output else "fail", labeller="ann")
