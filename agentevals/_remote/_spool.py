"""The spool: accepted run messages on disk (SQLite, WAL) until the broker confirmed their publish.

Several processes may share one spool file (e.g. the workers of a web server). Each engine owns the
rows it wrote; rows whose owner died (its process is gone, or its heartbeat is older than
``STALE_AFTER``) are adopted by the next engine that looks, so a process killed after acceptance has
its runs published by the next start on the same path.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

#: Seconds without a heartbeat after which another engine adopts an owner's rows.
STALE_AFTER = 60.0

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS agentevals_spool (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
    "message_id TEXT NOT NULL, queue TEXT NOT NULL, payload TEXT NOT NULL, owner TEXT NOT NULL, "
    "spooled_at REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS agentevals_spool_owner ON agentevals_spool (owner, seq)",
    "CREATE TABLE IF NOT EXISTS agentevals_spool_owners (owner TEXT PRIMARY KEY, host TEXT NOT NULL, "
    "pid INTEGER NOT NULL, heartbeat REAL NOT NULL)",
)


@dataclass(frozen=True)
class Spooled:
    """One message waiting in the spool: its row, Dramatiq message id, queue and JSON text."""

    seq: int
    message_id: str
    queue: str
    payload: str


class Spool:
    """A bounded SQLite spool of run messages (used by one thread: the forwarder's)."""

    def __init__(self, path: str | os.PathLike[str], *, max_rows: int) -> None:
        self.path = Path(path)
        self.max_rows = max_rows
        self.owner = uuid.uuid4().hex
        self._host = socket.gethostname()
        self._conn = open_spool(self.path)
        self._closed = False
        with self._conn:
            self._conn.execute(
                "INSERT INTO agentevals_spool_owners VALUES (?, ?, ?, ?)",
                (self.owner, self._host, os.getpid(), time.time()),
            )
        #: Rows of this owner: counted here, so the hot loop never counts the table.
        self.pending = 0

    def add(self, messages: list[tuple[str, str, str]]) -> int:
        """Store ``(message_id, queue, payload)`` messages, as many as fit under ``max_rows`` (all
        owners together), in one transaction; returns how many were stored (the first ones)."""
        if not messages:
            return 0
        with self._conn:
            (total,) = self._conn.execute("SELECT COUNT(*) FROM agentevals_spool").fetchone()
            room = max(0, self.max_rows - int(total))
            now = time.time()
            self._conn.executemany(
                "INSERT INTO agentevals_spool (message_id, queue, payload, owner, spooled_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [(mid, queue, payload, self.owner, now) for mid, queue, payload in messages[:room]],
            )
        stored = min(room, len(messages))
        self.pending += stored
        return stored

    def oldest(self, limit: int) -> list[Spooled]:
        """Up to ``limit`` of this owner's messages, oldest first."""
        rows = self._conn.execute(
            "SELECT seq, message_id, queue, payload FROM agentevals_spool WHERE owner = ? ORDER BY seq "
            "LIMIT ?",
            (self.owner, limit),
        ).fetchall()
        return [Spooled(*row) for row in rows]

    def remove(self, seqs: list[int]) -> None:
        """Delete published messages."""
        if not seqs:
            return
        with self._conn:
            self._conn.executemany("DELETE FROM agentevals_spool WHERE seq = ?", [(s,) for s in seqs])
        self.pending -= len(seqs)

    def heartbeat(self) -> None:
        """Tell other engines on this spool that this owner is alive."""
        with self._conn:
            self._conn.execute(
                "UPDATE agentevals_spool_owners SET heartbeat = ? WHERE owner = ?", (time.time(), self.owner)
            )

    def adopt_orphans(self) -> int:
        """Take over the rows of owners that are gone; returns how many rows were adopted."""
        with self._conn:
            self._conn.execute("BEGIN IMMEDIATE")  # one adopter at a time
            owners = self._conn.execute("SELECT owner, host, pid, heartbeat FROM agentevals_spool_owners")
            dead = [o for o, host, pid, beat in owners if o != self.owner and self._gone(host, pid, beat)]
            for owner in dead:
                self._conn.execute("DELETE FROM agentevals_spool_owners WHERE owner = ?", (owner,))
            adopted = self._conn.execute(
                "UPDATE agentevals_spool SET owner = ? WHERE owner NOT IN "
                "(SELECT owner FROM agentevals_spool_owners)",
                (self.owner,),
            ).rowcount
        self.pending += adopted
        return adopted

    def _gone(self, host: str, pid: int, heartbeat: float) -> bool:
        if time.time() - heartbeat > STALE_AFTER:
            return True
        return host == self._host and not _alive(pid)

    def close(self) -> None:
        """Step aside: this owner's rows that are left become orphans for the next engine to adopt."""
        if self._closed:
            return
        self._closed = True
        try:
            with self._conn:
                self._conn.execute("DELETE FROM agentevals_spool_owners WHERE owner = ?", (self.owner,))
        finally:
            self._conn.close()

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def open_spool(path: Path) -> sqlite3.Connection:
    """A connection to the spool at ``path`` (made if absent), WAL, with its tables; a ``ValueError``
    saying why when the file cannot be a spool."""
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=30.0, check_same_thread=False)
    except sqlite3.Error as err:
        raise ValueError(f"spool {str(path)!r} cannot be opened ({err}); pass a writable file path") from err
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # durable across a killed process; WAL keeps it fast
        conn.isolation_level = "DEFERRED"  # transactions opened by the first write, ended by `with conn`
        with conn:
            for statement in _SCHEMA:
                conn.execute(statement)
    except sqlite3.Error as err:
        conn.close()
        raise ValueError(
            f"spool {str(path)!r} is not a writable SQLite file ({err}); pass a path in a writable "
            "directory, e.g. spool='agentevals-spool.db'"
        ) from err
    return conn


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True
