"""The ``Sink`` protocol, and turning a plain callable into one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from agentevals._model._result import ScoreRecord


@runtime_checkable
class Sink(Protocol):
    """Where score records go: an async batch ``write`` and an async ``close``.

    ``write`` may raise; the engine retries it with backoff and finally dead-letters the batch, so a
    sink needs no retry logic of its own. A batch may be re-sent after a failure, so writes should be
    idempotent by record id where the store allows it (the SQL sinks are). A write error no retry can fix
    (a :class:`~agentevals.sinks.SinkConfigError`, a missing module, a path that cannot be written)
    dead-letters the batch at once.

    A sink may also have a sync ``check()`` that verifies its configuration before any write (driver,
    connection, table, path) and raises a ``ValueError`` saying how to fix it; every bundled sink has one,
    and the engine and the CLI call it when it is there.

    >>> class PrintSink:
    ...     async def write(self, records): print(len(records))
    ...     async def close(self): pass
    >>> isinstance(PrintSink(), Sink)
    True
    """

    async def write(self, records: Sequence[ScoreRecord]) -> None: ...

    async def close(self) -> None: ...


def sink_name(sink: Any) -> str:
    """A short name for logs and the dead-letter file."""
    name = getattr(sink, "name", None)
    return name if isinstance(name, str) and name else type(sink).__name__


def as_sink(obj: Any) -> Sink:
    """A ``Sink`` as is; a plain callable (sync or async, taking one record) wrapped in ``CallbackSink``."""
    if isinstance(obj, Sink):
        return obj
    if callable(obj):
        from agentevals.sinks._callback import CallbackSink

        return CallbackSink(obj)
    raise TypeError(
        f"{obj!r} is not a sink: pass an object with async `write(records)` and `close()`, or a "
        "callable taking one ScoreRecord"
    )
