"""A new store on SQLite and on PostgreSQL for every test that touches one."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from trust_stores import drop_postgres_store

from agentevals.sinks._open import sink_for


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[str, str]]:
    """``(address, table)`` of a new, empty store on SQLite or on PostgreSQL (dropped afterwards)."""
    table = f"agentevals_trust_{uuid.uuid4().hex[:10]}"
    if request.param == "sqlite":
        address = str(tmp_path / "store.db")
    else:
        address = request.getfixturevalue("postgres").url
    sink = sink_for(address, table=table)
    sink.check()
    await sink.close()
    yield address, table
    if request.param == "postgres":
        await drop_postgres_store(address, table)
