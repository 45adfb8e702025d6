"""How a ``ScoringEngine`` made with ``broker=`` gets its forwarder: the broker options checked against
the engine's other options at construction, then the forwarder made for a :class:`RunSource` (what it
needs of the engine: the accepted runs, and someone to tell of its progress)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentevals._engine._forward._broker import make_broker
from agentevals._engine._forward._forwarder import Forwarder, RunSource
from agentevals._engine._forward._options import BrokerOptions
from agentevals._engine._forward._spool import Spool
from agentevals._model._redact import Masker


def check_broker(options: BrokerOptions, *, sinks: Sequence[Any] | None, redact: object) -> Any:
    """The Dramatiq broker for ``options.url`` (nothing connected yet: the broker may be down, runs
    wait for it), once the engine's other options agree with scoring on workers; else a ``ValueError``
    saying how to fix them."""
    client = make_broker(options.url)  # checks the URL and that Dramatiq is installed
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
    if options.spool is not None:
        Spool(options.spool, max_rows=options.spool_size).close()  # a clear error now if it cannot be one
    return client


def make_forwarder(
    options: BrokerOptions,
    client: Any,
    source: RunSource,
    *,
    entity: str | None,
    batch_size: int,
    dead_letter: Path,
    mask: Masker | None,
) -> Forwarder:
    """A forwarder publishing what ``source`` hands over through ``client`` (from :func:`check_broker`)
    once started; runs the broker refuses for good go to ``dead_letter``."""
    spool = Spool(options.spool, max_rows=options.spool_size) if options.spool is not None else None
    return Forwarder(
        options.url,
        client,
        queue=options.queue,
        source=source,
        entity=entity,
        spool=spool,
        batch_size=batch_size,
        dead_letter=dead_letter,
        mask=mask,
    )
