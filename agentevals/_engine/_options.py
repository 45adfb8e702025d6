"""The engine's options, grouped by the part of the engine they govern: the queue, scoring, delivery to
the sinks and the exit. Each is a frozen dataclass checked when it is made (a value that cannot work is
a ``ValueError`` saying what would); ``ScoringEngine`` refuses anything else in their place with a
``TypeError`` naming the class. :class:`~agentevals.engine.BrokerOptions` lives with the forwarder."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Literal, TypeGuard, TypeVar

from agentevals._engine._forward._options import BrokerOptions
from agentevals.sinks._retry import DEFAULT_DEAD_LETTER, RetryPolicy

Overflow = Literal["drop_newest", "drop_oldest"]
_Options = TypeVar("_Options")


@dataclass(frozen=True)
class QueueOptions:
    """Where accepted runs wait between ``submit`` (which never blocks) and scoring or, with
    ``broker=``, forwarding.

    >>> QueueOptions(size=1_000, overflow="drop_oldest").size
    1000
    """

    size: int = 10_000
    """Runs that may wait at once; beyond that, ``overflow`` decides (every drop is counted)."""
    overflow: Overflow = "drop_newest"
    """When the queue is full: ``"drop_newest"`` refuses the new run, ``"drop_oldest"`` evicts the
    oldest (``submit`` returned ``True`` for it; counted in ``stats().dropped_evicted``)."""
    linger: float = 0.2
    """Seconds the runs gather in the queue before they are taken as one batch (less switching with
    the agent's thread, warm caches), cut short when the queue is half full or a flush waits."""

    def __post_init__(self) -> None:
        check_count("QueueOptions.size", self.size, "10_000")
        if self.overflow not in ("drop_newest", "drop_oldest"):
            raise ValueError(
                f"QueueOptions.overflow must be 'drop_newest' or 'drop_oldest', got {self.overflow!r}"
            )
        check_seconds(self.linger, "QueueOptions.linger", example="0.2")


@dataclass(frozen=True)
class ScoringOptions:
    """How scorer calls run: how many at once, and for how long.

    Scorers whose steps are all sync run in chunks on a worker thread of the engine: a call that
    overruns ``timeout`` gets its ``TimeoutError`` record and its thread is abandoned (a sync step
    cannot be interrupted). A sync step of a scorer that also has async steps runs on the engine's
    loop and cannot be cut off, so make slow steps ``async``.

    >>> ScoringOptions(max_concurrency=4, timeout=None).timeout is None
    True
    """

    max_concurrency: int = 16
    """Scorer calls at once (a :class:`~agentevals.engine.ScorerEntry` may set a lower limit of its own)."""
    timeout: float | None = 60.0
    """Seconds before a scorer call becomes a ``TimeoutError`` record (``None``: no limit); a
    :class:`~agentevals.engine.ScorerEntry` may set its own."""

    def __post_init__(self) -> None:
        check_count("ScoringOptions.max_concurrency", self.max_concurrency, "16")
        if self.timeout is not None and not (
            is_number(self.timeout) and math.isfinite(self.timeout) and self.timeout > 0
        ):
            raise ValueError(
                "ScoringOptions.timeout must be a positive, finite number of seconds (e.g. 60.0) or None "
                f"for no limit, got {self.timeout!r}"
            )


@dataclass(frozen=True)
class DeliveryOptions:
    """How records reach the sinks: batched, retried, and finally appended to a dead-letter file.

    Each sink has its writer and its buffer, so a slow sink never holds up another. A record holding
    values no store can take (circular or very deep containers, non-UTF-8 bytes, lone surrogates,
    objects whose ``repr`` raises) is stored with them replaced and their paths in its ``sanitized``
    field; a record a sink still rejects is isolated from its batch.

    >>> DeliveryOptions(batch_size=64, dead_letter="dead.jsonl").batch_size
    64
    """

    batch_size: int = 256
    """Records per sink write (with ``broker=``: runs the forwarder takes from the queue at once)."""
    linger: float = 0.2
    """Seconds a sink's writer waits for a full batch before writing what it has (a flush does not wait)."""
    buffer: int = 10_000
    """Records that may wait per sink; when a buffer is full, scoring waits for it (nothing is dropped)."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """How a failed write is retried (:class:`~agentevals.sinks.RetryPolicy`)."""
    dead_letter: str | os.PathLike[str] = DEFAULT_DEAD_LETTER
    """The JSONL file that takes the records a sink still refused (re-send them with
    :func:`agentevals.sinks.replay`); with ``broker=``, the runs the broker refuses for good."""

    def __post_init__(self) -> None:
        check_count("DeliveryOptions.batch_size", self.batch_size, "256")
        check_seconds(self.linger, "DeliveryOptions.linger", example="0.2")
        check_count("DeliveryOptions.buffer", self.buffer, "10_000")
        if not isinstance(self.retry, RetryPolicy):
            raise TypeError(
                f"DeliveryOptions.retry must be a RetryPolicy(attempts=..., initial=...), got {self.retry!r}"
            )
        if not isinstance(self.dead_letter, str | os.PathLike):
            raise TypeError(
                f"DeliveryOptions.dead_letter must be a file path (e.g. 'agentevals-deadletter.jsonl'), "
                f"got {self.dead_letter!r}"
            )


@dataclass(frozen=True)
class ExitOptions:
    """What the engine does when the process ends: ``shutdown()`` runs at interpreter exit (so a normal
    exit loses nothing that was accepted) and, by default, on SIGTERM.

    >>> ExitOptions(timeout=10.0, handle_sigterm=False).handle_sigterm
    False
    """

    timeout: float = 30.0
    """Seconds the flush at interpreter exit, or on SIGTERM, may take."""
    handle_sigterm: bool = True
    """On SIGTERM (how containers stop a service), flush within ``timeout``, then run the handler the
    application had installed or, if none, end the process as SIGTERM does. Installed only when the
    engine is made on the main thread; ``False`` leaves SIGTERM alone."""

    def __post_init__(self) -> None:
        check_seconds(self.timeout, "ExitOptions.timeout", example="30.0")
        if not isinstance(self.handle_sigterm, bool):
            raise ValueError(f"ExitOptions.handle_sigterm must be True or False, got {self.handle_sigterm!r}")


def options_of(value: object, kind: type[_Options], keyword: str, example: str) -> _Options:
    """``value`` when it is a ``kind``; else a ``TypeError`` naming the class to use."""
    if isinstance(value, kind):
        return value
    name = kind.__name__
    article = "an" if name[0] in "AEIOU" else "a"
    raise TypeError(
        f"{keyword}= takes {article} {name}, e.g. {keyword}={name}({example}) (from agentevals.engine "
        f"import {name}); got {type(value).__name__} {value!r}"
    )


def broker_of(value: object) -> BrokerOptions | None:
    """``broker=`` as :class:`BrokerOptions` (a URL stands for ``BrokerOptions(url)``), or ``None``."""
    if value is None or isinstance(value, BrokerOptions):
        return value
    if isinstance(value, str):
        return BrokerOptions(value)
    raise TypeError(
        "broker= takes a URL such as 'amqp://guest:guest@127.0.0.1:5672/' or a BrokerOptions, e.g. "
        "broker=BrokerOptions('amqp://...', spool='agentevals-spool.db') (from agentevals.engine import "
        f"BrokerOptions); got {type(value).__name__} {value!r}"
    )


def check_count(name: str, value: object, example: str) -> None:
    """A ``ValueError`` unless ``value`` is a whole number >= 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1 (e.g. {example}), got {value!r}")


def check_seconds(value: object, name: str = "timeout", *, example: str = "30.0") -> float:
    """``value`` if it is a finite number of seconds >= 0, else a ``ValueError`` saying so."""
    if is_number(value) and math.isfinite(value) and value >= 0:
        return value
    raise ValueError(f"{name} must be a finite number of seconds >= 0 (e.g. {example}), got {value!r}")


def is_number(value: object) -> TypeGuard[float]:
    """Whether ``value`` is an int or a float (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool)
