"""Publishes a broker refuses for good (as opposed to an outage), and where their runs go: a line each in
the engine's dead-letter file, so one bad run never blocks the runs behind it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from agentevals.sinks._jsonl import append_lines

#: AMQP reply codes of a refusal that a retry cannot change (406 PRECONDITION_FAILED: e.g. the message
#: exceeds the broker's ``max_message_size``).
_REFUSING_AMQP_CODES = frozenset({406})
#: Redis error replies that pass (the server is loading, out of memory, busy, a replica, ...): retried.
_PASSING_REDIS_ERRORS = ("OOM", "LOADING", "BUSY", "READONLY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN")


class MessageTooLarge(Exception):
    """One run's message alone, compressed, is larger than the forwarder's ``max_packed_bytes``."""


def refused_for_good(err: BaseException) -> bool:
    """Whether publishing failed for a reason a retry of the same message cannot change (too large,
    cannot be encoded, refused by the broker); anything else (connection refused or lost, timeouts,
    a broker that is starting or out of memory) is an outage, retried with backoff."""
    if isinstance(err, MessageTooLarge | TypeError | ValueError | UnicodeError):
        return True
    cause = err.args[0] if err.args and isinstance(err.args[0], BaseException) else err  # Dramatiq wraps
    reply_code = getattr(cause, "reply_code", None)
    if type(cause).__name__ == "ChannelClosedByBroker" and reply_code in _REFUSING_AMQP_CODES:
        return True
    if type(cause).__name__ == "ResponseError":  # redis-py: an error reply to a well-formed request
        return not str(cause).startswith(_PASSING_REDIS_ERRORS)
    return False


def dead_letter_run(path: Path, *, broker: str, queue: str, entry_text: str, reason: str) -> None:
    """Append the run entry ``entry_text`` (JSON text, see the codec) with why it was not published."""
    head = json.dumps(
        {"broker": broker, "queue": queue, "error": reason, "failed_at": datetime.now(UTC).isoformat()}
    )
    append_lines(path, [f'{head[:-1]}, "run_entry": {entry_text}}}'])
