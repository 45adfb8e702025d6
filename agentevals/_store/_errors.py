"""The store's configuration error, raised by the store and the sinks that write it (and exported with
the sinks under the same name)."""

from __future__ import annotations


class SinkConfigError(ValueError):
    """A sink cannot work as configured: a missing driver, an unknown database or role, a refused login,
    a path that cannot be written. Retrying does not help, so the engine dead-letters the batch at once
    and logs this message, which says how to fix it. ``check()`` on a sink raises it before any write.

    ``transient`` marks the one case ``check()`` also reports that may fix itself (a server that cannot
    be reached right now); a write that fails that way is retried as usual.

    >>> err = SinkConfigError("install psycopg: pip install 'agentevals-core[postgres]'")
    >>> isinstance(err, ValueError), err.transient
    (True, False)
    """

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient
