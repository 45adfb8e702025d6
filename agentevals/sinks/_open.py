"""The sink that writes a store, chosen by the store's address: ``agentevals eval --db``, ``replay`` and
``rescore`` write where they are pointed without naming a sink class.

>>> type(sink_for("postgresql://127.0.0.1/test", table="evals")).__name__
'PostgresSink'
"""

from __future__ import annotations

import os
from typing import Any

from agentevals._store._row import TABLE
from agentevals._store._store import Store, is_jsonl_address, is_postgres_address
from agentevals._store._table_name import check_table
from agentevals.sinks._jsonl import JsonlSink
from agentevals.sinks._options import OnConflict
from agentevals.sinks._postgres import PostgresSink
from agentevals.sinks._sqlite import SQLiteSink
from agentevals.sinks._sqlite_process import SQLiteProcessWriter


def sink_for(address: str | os.PathLike[str], *, table: str = TABLE) -> Any:
    """A sink writing to the store at ``address``: ``PostgresSink`` for a ``postgresql://`` URL,
    ``JsonlSink`` for a ``.jsonl`` file, ``SQLiteSink`` for any other path (created on first write)."""
    check_table(table)
    if is_postgres_address(address):
        return PostgresSink(str(address), table=table)
    if is_jsonl_address(address):
        return JsonlSink(address)
    return SQLiteSink(address, table=table)


def store_writer(store: Store, *, replace: bool = False, bulk: bool = False) -> Any:
    """A new sink writing scores to the opened ``store`` (``SQLiteSink`` or ``PostgresSink``, same
    table); its runs are there already, so it writes no runs rows (``store_runs="none"``). ``replace``:
    a record replaces the stored row of its id (else the stored row is kept). A JSONL store's sink
    appends to its file (a forced record is added again). ``bulk``: on SQLite, a writer in a child
    process (large batches, on another core)."""
    on_conflict: OnConflict = "replace" if replace else "keep"
    if is_jsonl_address(store.address):
        return JsonlSink(store.address)
    if store.kind == "sqlite" and bulk:
        return SQLiteProcessWriter(store.address, table=store.table, replace=replace)
    if store.kind == "sqlite":
        return SQLiteSink(store.address, table=store.table, store_runs="none", on_conflict=on_conflict)
    return PostgresSink(store.address, table=store.table, store_runs="none", on_conflict=on_conflict)
