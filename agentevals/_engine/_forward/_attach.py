"""How a ``ScoringEngine`` made with ``broker=`` hands its accepted runs to a :class:`Forwarder`
instead of scoring them: its options checked at construction, and the relay on the engine's loop
that wakes the forwarder when runs were queued (the agent's thread only appends to the queue)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agentevals._engine._dispatch import EngineDispatch
from agentevals._engine._forward._codec import QUEUE
from agentevals._engine._forward._forwarder import Forwarder, Outgoing, make_broker
from agentevals._engine._forward._spool import Spool
from agentevals._model._redact import Masker

_QUEUE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9._-]*")


@dataclass(frozen=True)
class RemoteOptions:
    """The checked ``broker=``, ``spool=``, ``spool_size=``, ``broker_queue=`` and ``redact=`` of an
    engine."""

    url: str
    broker: Any  # the Dramatiq broker for ``url`` (nothing connected yet)
    spool: str | os.PathLike[str] | None
    spool_size: int
    queue: str
    mask: Masker | None  # masks each run's texts before it is encoded


def check_remote_options(
    broker: str | None,
    *,
    spool: str | os.PathLike[str] | None,
    spool_size: int,
    queue: str,
    sinks: Sequence[Any] | None,
    redact: Any,
) -> RemoteOptions | None:
    """The remote options, or ``None`` without ``broker=``; a ``ValueError`` saying how to fix them.
    The broker need not be reachable (runs wait until it is), but its URL must be usable."""
    if broker is None:
        if spool is not None:
            raise ValueError("spool= keeps runs for a broker: pass broker='amqp://...' too, or drop spool=")
        return None
    client = make_broker(broker)  # checks the scheme, the URL and that Dramatiq is installed
    if sinks is not None:
        raise ValueError(
            "with broker= the workers score and store: give the sinks to `agentevals worker --sink ...`, "
            "not to the engine (drop sinks=)"
        )
    if redact is not None and not isinstance(redact, Masker):
        raise ValueError(
            "with broker=, redact= must be a mask from agentevals.redaction (e.g. mask([EMAIL, PHONE])): "
            "it masks every text of each run here, before the run is spooled or published; a function "
            f"(record) -> record such as {redact!r} works on the workers' records instead: "
            "`agentevals worker --redact module:REDACTOR`"
        )
    if isinstance(spool_size, bool) or not isinstance(spool_size, int) or spool_size < 1:
        raise ValueError(f"spool_size must be a whole number >= 1 (e.g. 100_000), got {spool_size!r}")
    if not isinstance(queue, str) or not _QUEUE_NAME.fullmatch(queue):
        raise ValueError(
            f"broker_queue must be a queue name of letters, digits, '.', '_' or '-' (e.g. {QUEUE!r}), "
            f"got {queue!r}"
        )
    if spool is not None:
        Spool(spool, max_rows=spool_size).close()  # a clear error now if the file cannot be a spool
    return RemoteOptions(broker, client, spool, spool_size, queue, redact)


def start_forwarder(
    engine: EngineDispatch, options: RemoteOptions, *, batch_size: int
) -> tuple[Forwarder, Callable[[], None]]:
    """The engine's forwarder, and the function that starts the relay on the engine's loop (in place
    of the scoring dispatch)."""
    keys = {id(entry): key for key, entry in engine._entries.items()}
    key_tuples: dict[int, tuple[str, ...]] = {}
    queue = engine._queue

    def take(limit: int) -> list[Outgoing]:
        items: list[Outgoing] = []
        while len(items) < limit:
            try:
                run, entries, _accepted = queue.popleft()
            except IndexError:
                break
            names = key_tuples.get(id(entries))
            if names is None:
                names = tuple(keys[id(entry)] for entry in entries)
                if entries is engine._all:  # the shared tuple of "every scorer": cache it
                    key_tuples[id(entries)] = names
            items.append((run, names))
        return items

    spool = Spool(options.spool, max_rows=options.spool_size) if options.spool is not None else None
    forwarder = Forwarder(
        options.url,
        options.broker,
        queue=options.queue,
        take=take,
        entity=engine.entity,
        spool=spool,
        batch_size=batch_size,
        on_progress=lambda: _wake_flush(engine),
        dead_letter=engine.dead_letter.path,
        mask=options.mask,
    )

    def start() -> None:
        engine._service = [engine._loop.create_task(_relay(engine, forwarder), name="agentevals-forward")]

    return forwarder, start


def _wake_flush(engine: EngineDispatch) -> None:
    """Let a waiting flush see the progress now (it runs on the engine's loop)."""
    if engine._flushing:
        engine._loop.call_soon_threadsafe(engine._check_settled)


async def _relay(engine: EngineDispatch, forwarder: Forwarder) -> None:
    """Wake the forwarder when runs were queued, after ``linger`` (as the scoring dispatch does: fewer
    wake-ups of the agent's thread, bigger batches), at once when the queue is half full or a flush
    waits."""
    while True:
        await engine._wake.wait()
        if engine.linger and not engine._rush.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(engine.linger):
                    await engine._rush.wait()
        engine._wake.clear()
        if not engine._flushing:
            engine._rush.clear()
        engine._wake_pending = False  # a submit that still saw it True appended before this
        forwarder.wake()
