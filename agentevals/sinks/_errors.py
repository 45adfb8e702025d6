"""What a sink's write may raise beyond plain failure, which failures are permanent (not worth a retry),
and telling a real cancellation from a raised one."""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Sequence

from agentevals._model._result import ScoreRecord
from agentevals._store._errors import SinkConfigError

__all__ = ["PartialWriteError", "SinkConfigError", "is_permanent"]


class PartialWriteError(Exception):
    """Raised by a sink's ``write`` that stored part of the batch: only ``failed`` is tried again.

    ``error`` is why those failed (the first error if several). :class:`CallbackSink` raises it when
    some of its calls fail, so the records that went through are never delivered twice.

    >>> err = PartialWriteError([], ValueError("bad record"))
    >>> err.failed, str(err)
    ([], '0 record(s) not written: ValueError: bad record')
    """

    def __init__(self, failed: Sequence[ScoreRecord], error: BaseException) -> None:
        super().__init__(f"{len(failed)} record(s) not written: {type(error).__name__}: {error}")
        self.failed = list(failed)
        self.error = error


# SQLite primary result codes that no retry fixes (https://sqlite.org/rescode.html).
_SQLITE_PERMANENT = {3: "SQLITE_PERM", 8: "SQLITE_READONLY", 14: "SQLITE_CANTOPEN", 23: "SQLITE_AUTH",
                     26: "SQLITE_NOTADB"}  # fmt: skip
_OS_PERMANENT = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR, errno.EEXIST}


def is_permanent(error: BaseException) -> bool:
    """Whether retrying a write that raised ``error`` is pointless: a :class:`SinkConfigError` (not
    transient), a missing module, a path that cannot be written (permission, read-only file system, a
    file where a directory should be), or SQLite refusing the file itself (read-only, cannot open, not
    a database). Everything else (refused or reset connections, timeouts, a locked database, a full
    disk) is transient and retried.

    >>> is_permanent(PermissionError(13, "Permission denied")), is_permanent(ConnectionRefusedError())
    (True, False)
    """
    if isinstance(error, PartialWriteError):
        error = error.error
    if isinstance(error, SinkConfigError):
        return not error.transient
    if isinstance(error, ImportError):
        return True
    if isinstance(error, OSError) and not isinstance(error, ConnectionError | TimeoutError):
        return error.errno in _OS_PERMANENT
    if isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", None)
        return isinstance(code, int) and code & 0xFF in _SQLITE_PERMANENT
    return False
