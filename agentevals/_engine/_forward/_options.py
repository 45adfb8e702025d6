"""``BrokerOptions``: where a ``ScoringEngine`` made with ``broker=`` publishes its accepted runs."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from agentevals._engine._forward._codec import QUEUE
from agentevals._store._store import display_address

_QUEUE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9._-]*")
SCHEMES = ("amqp", "amqps", "redis", "rediss", "unix")


@dataclass(frozen=True)
class BrokerOptions:
    """Score on workers (``agentevals worker``) instead of in this process: accepted runs go to a
    forwarder thread that publishes them to RabbitMQ or Redis; the workers' sinks store the records.

    The broker may be down: runs wait (reconnects with backoff), in the engine's queue or, with a
    ``spool``, in a SQLite file they leave only once the broker confirmed them (a restarted process on
    the same spool sends what a killed one left). Needs ``agentevals-core[workers]``.

    >>> BrokerOptions("amqp://guest:guest@127.0.0.1:5672/", spool="agentevals-spool.db").queue
    'agentevals'
    """

    url: str
    """``"amqp://user:password@host:5672/"`` (RabbitMQ, recommended) or ``"redis://host:6379/0"``."""
    queue: str = QUEUE
    """The queue the workers consume (``agentevals worker --queue``)."""
    spool: str | os.PathLike[str] | None = None
    """A SQLite file holding the runs until the broker confirmed them; ``None`` keeps them in memory."""
    spool_size: int = 100_000
    """Runs the spool holds at most (all the processes sharing it together); beyond, runs are dropped
    and counted in ``stats().dropped_unsent``."""

    def __post_init__(self) -> None:
        check_url(self.url)
        if isinstance(self.spool_size, bool) or not isinstance(self.spool_size, int) or self.spool_size < 1:
            raise ValueError(
                "BrokerOptions.spool_size must be a whole number >= 1 (e.g. 100_000), "
                f"got {self.spool_size!r}"
            )
        if not isinstance(self.queue, str) or not _QUEUE_NAME.fullmatch(self.queue):
            raise ValueError(
                "BrokerOptions.queue must be a queue name of letters, digits, '.', '_' or '-' "
                f"(e.g. {QUEUE!r}), got {self.queue!r}"
            )
        if self.spool is not None and not isinstance(self.spool, str | os.PathLike):
            raise ValueError(
                "BrokerOptions.spool must be a file path (e.g. 'agentevals-spool.db') or None, "
                f"got {self.spool!r}"
            )


def check_url(url: object) -> str:
    """``url`` when its scheme names a broker agentevals can publish to, else a ``ValueError`` (that
    shows no password)."""
    if not isinstance(url, str):
        raise ValueError(
            f"broker must be a URL text such as 'amqp://guest:guest@127.0.0.1:5672/', got {url!r}"
        )
    scheme = urlsplit(url).scheme.lower()
    if scheme not in SCHEMES:
        raise ValueError(
            f"broker {display_address(url)!r}: unknown scheme {scheme!r}; use "
            "amqp://user:password@host:5672/ (RabbitMQ, recommended) or redis://host:6379/0 (Redis)"
        )
    return url
