"""The store that labels are read from and written to: an open one, or one opened by address. Labels live
in SQLite and PostgreSQL stores; a JSONL file keeps score records only."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from agentevals._store._row import TABLE
from agentevals._store._store import Store, display_address, is_jsonl_address, open_store

StoreLike = str | os.PathLike[str] | Store
"""A store: its address (a SQLite file, a ``postgresql://`` URL) or an open :class:`Store`."""


def check_labels_kept(address: str | os.PathLike[str]) -> None:
    """Raise ``ValueError`` when the store at ``address`` cannot keep labels (a JSONL file)."""
    if is_jsonl_address(address):
        raise ValueError(
            f"{display_address(address)!r} is a JSONL file, which keeps score records only: labels are "
            "kept in a SQLite store (a file written by SQLiteSink) or a PostgreSQL store (a postgresql:// "
            "URL): store the runs with SQLiteSink or PostgresSink and label them there"
        )


@contextlib.contextmanager
def opened(store: StoreLike, *, table: str = TABLE, read_only: bool = False) -> Iterator[Store]:
    """``store`` if it is open (left open), else the store at that address (closed on leaving)."""
    if isinstance(store, Store):
        check_labels_kept(store.address)
        yield store
        return
    check_labels_kept(store)
    with open_store(store, table=table, read_only=read_only) as fresh:
        yield fresh
