"""What a sink's write may raise beyond plain failure, and telling a real cancellation from a raised one."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from agentevals._result import ScoreRecord


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


def really_cancelled(error: BaseException) -> bool:
    """Whether ``error`` is the cancellation of the running task (shutdown), not a ``CancelledError``
    some code raised on its own (which is an ordinary failure)."""
    if not isinstance(error, asyncio.CancelledError):
        return False
    task = asyncio.current_task()
    return task is None or task.cancelling() > 0
