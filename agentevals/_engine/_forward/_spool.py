"""The spool: accepted run messages on disk (SQLite, WAL) until the broker confirmed their publish.

Several processes may share one spool file (e.g. the workers of a web server). Each engine owns the
rows it wrote; rows whose owner died (its process is gone, or its heartbeat is older than
``STALE_AFTER``) are adopted by the next engine that looks, so a process killed after acceptance has
its runs published by the next start on the same path.

A damaged spool file (a disk fault, a truncated copy; still a SQLite file by its header) is moved
aside as ``<name>.corrupt-<UTC time>``; the runs that can still be read from it go to a new spool, as
orphans the next engine adopts, and one WARNING names both files and counts what was salvaged and lost.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

logger = logging.getLogger("agentevals.engine")

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
#: SQLite primary result codes of a damaged file: SQLITE_CORRUPT, SQLITE_NOTADB.
_DAMAGE_CODES = (11, 26)
#: The owner of salvaged rows: no engine, so the next one to look adopts them.
_SALVAGED = "salvaged"
#: Queries a salvage may make to read around damaged pages (each one fails or reads fast).
_SALVAGE_QUERIES = 100_000


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


class _Damaged(Exception):
    """The spool file is damaged (what SQLite or its integrity check said)."""


def open_spool(path: Path) -> sqlite3.Connection:
    """A connection to the spool at ``path`` (made if absent), WAL, with its tables; a ``ValueError``
    saying why when the file cannot be a spool. A damaged file is replaced (see the module docstring)."""
    try:
        return _connected(path)
    except _Damaged as damage:
        return _salvaged(path, str(damage))


def _connected(path: Path) -> sqlite3.Connection:
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
        # Once per start: a damaged page would otherwise fail the forwarder over and over, later.
        problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check(3)")]
        if problems != ["ok"]:
            raise _Damaged("; ".join(problems))
    except sqlite3.Error as err:
        conn.close()
        code = getattr(err, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF in _DAMAGE_CODES and _is_sqlite(path):
            raise _Damaged(str(err)) from err
        raise ValueError(
            f"spool {str(path)!r} is not a writable SQLite file ({err}); pass a path in a writable "
            "directory, e.g. spool='agentevals-spool.db'"
        ) from err
    except _Damaged:
        conn.close()
        raise
    return conn


def _is_sqlite(path: Path) -> bool:
    """Whether ``path`` starts as a SQLite file does: anything else was never a spool (a wrong path),
    and is left alone."""
    try:
        with path.open("rb") as file:
            return file.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _salvaged(path: Path, damage: str) -> sqlite3.Connection:
    """Move the damaged spool at ``path`` aside and start a new one holding the runs read from it."""
    rows, total = _readable_rows(path)
    aside = path.with_name(f"{path.name}.corrupt-{datetime.now(UTC):%Y%m%dT%H%M%S.%fZ}")
    for suffix in ("", "-wal", "-shm"):  # the WAL may hold the newest runs: it goes along
        part = Path(f"{path}{suffix}")
        if part.exists():
            part.rename(f"{aside}{suffix}")
    conn = _connected(path)
    with conn:
        conn.executemany(
            "INSERT INTO agentevals_spool (message_id, queue, payload, owner, spooled_at) "
            "VALUES (?, ?, ?, ?, ?)",
            [(*row, _SALVAGED, spooled_at) for row, spooled_at in rows],
        )
    lost = (
        f"{total - len(rows)} lost" if total is not None and total >= len(rows)
        else "those in its damaged part are lost (their number cannot be read)"
    )  # fmt: skip
    logger.warning(
        "agentevals: spool %r is damaged (%s); moved it aside to %r and started a new spool there: "
        "%d run(s) salvaged into it (published once the broker takes them), %s",
        str(path),
        damage,
        str(aside),
        len(rows),
        lost,
    )
    return conn


def _readable_rows(path: Path) -> tuple[list[tuple[tuple[str, str, str], float]], int | None]:
    """The rows of a damaged spool that can still be read (each entry's JSON intact), and how many rows
    it held, when that can be read."""
    found: dict[int, tuple[tuple[str, str, str], float]] = {}
    try:
        conn = sqlite3.connect(path, isolation_level=None)
    except sqlite3.Error:
        return [], None
    try:
        conn.execute("PRAGMA writable_schema=ON")  # reads the schema past some damage (read only here)
        try:
            (last,) = conn.execute(
                "SELECT seq FROM sqlite_sequence WHERE name = 'agentevals_spool'"
            ).fetchone()
        except (sqlite3.Error, TypeError):
            last = 2**63 - 1
        _read_range(conn, 1, int(last), found, budget=[_SALVAGE_QUERIES])
        try:
            total: int | None = int(conn.execute("SELECT COUNT(*) FROM agentevals_spool").fetchone()[0])
        except sqlite3.Error:
            total = None
    except sqlite3.Error:  # not even the schema can be read
        total = None
    finally:
        conn.close()
    return [found[seq] for seq in sorted(found)], total


def _read_range(
    conn: sqlite3.Connection,
    low: int,
    high: int,
    found: dict[int, tuple[tuple[str, str, str], float]],
    *,
    budget: list[int],
) -> None:
    """Read the rows with ``low <= seq <= high`` into ``found``; past a damaged page, the rest of the
    range is read in halves, so only the rows of the damaged pages are lost (within ``budget`` queries)."""
    while low <= high and budget[0] > 0:
        budget[0] -= 1
        try:
            for seq, message_id, queue, payload, spooled_at in conn.execute(
                "SELECT seq, message_id, queue, payload, spooled_at FROM agentevals_spool "
                "WHERE seq BETWEEN ? AND ? ORDER BY seq",
                (low, high),
            ):
                if _intact(payload):
                    found[seq] = ((str(message_id), str(queue), payload), float(spooled_at))
                low = seq + 1
            return
        except sqlite3.Error:
            if low == high:
                return  # this row is lost
            middle = (low + high) // 2
            _read_range(conn, low, middle, found, budget=budget)
            low = middle + 1


def _intact(payload: object) -> bool:
    if not isinstance(payload, str):
        return False
    try:
        json.loads(payload)
    except ValueError:
        return False
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True
