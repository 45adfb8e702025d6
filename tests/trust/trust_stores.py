"""Helpers of the trust tests: writing records to a store, and dropping a PostgreSQL store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentevals._store._catalog_tables import ScorerInfo
from agentevals._store._row import tables
from agentevals._store._schema_check import store_tables
from agentevals.results import ScoreRecord
from agentevals.sinks._open import sink_for


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
