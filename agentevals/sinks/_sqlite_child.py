"""The writing process of :class:`~agentevals.sinks._sqlite_process.SQLiteProcessWriter`.

Run as a script (``python -I _sqlite_child.py STORE SQL``), not imported: it uses only the standard
library, so it starts in milliseconds. It reads length-prefixed pickled row lists on stdin, writes each
list in one transaction and answers one line per list: ``ok`` or the error. It ends at the end of its
input and ignores Ctrl-C, so a stopped parent still sends what is done.
"""

from __future__ import annotations

import pickle
import signal
import sqlite3
import sys


def main(store: str, sql: str) -> None:
    """Write every row list that arrives on stdin into ``store`` with ``sql`` (an ``executemany``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn = sqlite3.connect(store, isolation_level=None, timeout=30.0)
    conn.execute("PRAGMA synchronous=NORMAL")
    read, out = sys.stdin.buffer.read, sys.stdout.buffer
    while header := read(8):
        rows = pickle.loads(read(int.from_bytes(header, "little")))
        try:
            conn.execute("BEGIN")
            conn.executemany(sql, rows)
            conn.execute("COMMIT")
            out.write(b"ok\n")
        except Exception as err:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            out.write(f"{type(err).__name__}: {err}".replace("\n", " ").encode() + b"\n")
        out.flush()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
