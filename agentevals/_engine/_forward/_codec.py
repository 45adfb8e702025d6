"""The messages that carry accepted runs from an agent to a scoring worker.

One run travels as an *entry*: ``{"run": {...}, "scorers": [...], "entity": ..., "accepted_at":
"<ISO-8601 UTC>"}``. ``run`` holds every :class:`~agentevals.Run` field as JSON (messages with their tool
invocations, context, metadata, trace id, error, ...), so the worker rebuilds the same run. A value
JSON cannot hold (an arbitrary object in ``metadata``) travels as its ``repr``, as in the stores.

A message is a batch: ``{"v": 2, "runs": [entry, ...]}``. The forwarder publishes it as JSON *text*
(the Dramatiq message's one argument), joined from the entries' texts, so a spooled run is never
decoded and encoded again. A batch text over ``PACK_OVER`` bytes (only a lone large run gets there)
travels packed: ``{"v": 2, "zlib": "<base64 of the zlib-compressed batch text>"}``. Any other ``v`` is
a bad message.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

from agentevals._model._run import Run
from agentevals._support._json import jsonable

#: The Dramatiq queue and actor names both sides use.
QUEUE = "agentevals"
ACTOR = "agentevals_score"
#: The message layout this release writes and reads (a batch).
VERSION = 2
#: A batch text longer than this travels packed (compressed); the forwarder's batches stay under it.
PACK_OVER = 1_000_000
#: The most a worker unpacks (bytes of JSON): far above any run an agent makes, it bounds a worker's
#: memory against a message that is not what it claims.
MAX_UNPACKED = 1_000_000_000


@dataclass(frozen=True)
class RemoteRun:
    """One decoded run: the run, the ids of the scorers that sampled it, the engine's default entity
    (for records whose run names none) and when the agent accepted it."""

    run: Run
    scorer_keys: tuple[str, ...]
    entity: str | None
    accepted_at: datetime


def run_entry_text(run: Run, scorer_keys: Sequence[str], *, entity: str | None) -> str:
    """The entry of ``run`` as compact JSON text, ready to join into a batch (see :func:`batch_text`).

    >>> text = run_entry_text(Run(run_id="r1", input="hi", output="hello"), ["len"], entity="bot")
    >>> [remote.run.output_text for remote in runs_from_message(batch_text([text, text]))]
    ['hello', 'hello']
    """
    entry = {
        "run": run,
        "scorers": [str(key) for key in scorer_keys],
        "entity": entity,
        "accepted_at": datetime.now(UTC).isoformat(),
    }
    try:  # pydantic-core's Rust serializer: the common, fast path
        return to_json(entry, fallback=repr, inf_nan_mode="null").decode()
    except (PydanticSerializationError, UnicodeError):  # e.g. a lone surrogate: escaped as ASCII
        return json.dumps(jsonable(entry), separators=(",", ":"))


def batch_text(entry_texts: Sequence[str]) -> str:
    """The batch message (version 2) holding the entries ``entry_texts``, as JSON text."""
    return f'{{"v":{VERSION},"runs":[{",".join(entry_texts)}]}}'


def packed_text(text: str) -> str:
    """The batch text ``text`` as a packed message (zlib, base64: the message stays JSON text).

    >>> text = batch_text([run_entry_text(Run(run_id="r1", input="hi", output="x" * 5000), [], entity=None)])
    >>> packed = packed_text(text)
    >>> len(packed) < len(text), runs_from_message(packed)[0].run.run_id
    (True, 'r1')
    """
    packed = base64.b64encode(zlib.compress(text.encode("utf-8"), 6)).decode("ascii")
    return f'{{"v":{VERSION},"zlib":"{packed}"}}'


def _unpacked(packed: Any) -> Any:
    """The batch message inside a packed one, as data."""
    if not isinstance(packed, str):
        raise ValueError(f"packed run message: 'zlib' must be base64 text; got {type(packed).__name__}")
    try:
        inflater = zlib.decompressobj()
        data = inflater.decompress(base64.b64decode(packed, validate=True), MAX_UNPACKED)
        if inflater.unconsumed_tail:
            raise ValueError(f"it unpacks to more than {MAX_UNPACKED:,} bytes")
        batch = json.loads(data)
    except (binascii.Error, zlib.error, ValueError) as err:
        raise ValueError(f"packed run message cannot be unpacked: {err}") from err
    if not isinstance(batch, Mapping) or "zlib" in batch:
        raise ValueError("packed run message must hold a batch message")
    return batch


def runs_from_message(payload: Any) -> list[RemoteRun]:
    """The runs of a message (a batch, packed or not, as JSON text or data); a ``ValueError`` saying
    what is wrong when ``payload`` is not such a message or was written by a newer release."""
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except ValueError as err:
            raise ValueError(f"an agentevals run message as text must be JSON: {err}") from err
    if not isinstance(payload, Mapping):
        raise ValueError(f"an agentevals run message is a JSON object; got {type(payload).__name__}")
    version = payload.get("v")
    if type(version) is not int or version < VERSION:
        raise ValueError(f"not an agentevals run message: its version 'v' is {version!r}, not {VERSION}")
    if version > VERSION:
        raise ValueError(
            f"run message version {version} is newer than this release reads ({VERSION}): upgrade "
            "agentevals-core on the workers to the agents' release"
        )
    if "zlib" in payload:
        payload = _unpacked(payload["zlib"])
    entries = payload.get("runs")
    if not isinstance(entries, list):
        raise ValueError(f"batch run message without a 'runs' list (got {type(entries).__name__})")
    return [_entry(entry) for entry in entries]


def _entry(data: Any) -> RemoteRun:
    if not isinstance(data, Mapping):
        raise ValueError(f"a run entry is a JSON object; got {type(data).__name__}")
    run_data, scorers, entity = data.get("run"), data.get("scorers"), data.get("entity")
    if not isinstance(run_data, Mapping):
        raise ValueError(f"run message without a 'run' object (got {type(run_data).__name__})")
    if not isinstance(scorers, list) or not all(isinstance(key, str) for key in scorers):
        raise ValueError(f"run message 'scorers' must be a list of scorer ids; got {scorers!r}")
    if entity is not None and not isinstance(entity, str):
        raise ValueError(f"run message 'entity' must be text or null; got {entity!r}")
    try:
        accepted_at = datetime.fromisoformat(str(data.get("accepted_at")))
        run = Run.model_validate(dict(run_data))
    except ValueError as err:
        raise ValueError(f"run message {_run_id(run_data)} cannot be read: {err}") from err
    if accepted_at.tzinfo is None:
        accepted_at = accepted_at.replace(tzinfo=UTC)
    return RemoteRun(run=run, scorer_keys=tuple(scorers), entity=entity, accepted_at=accepted_at)


def _run_id(run_data: Mapping[str, Any]) -> str:
    run_id = run_data.get("run_id")
    return repr(run_id) if run_id is not None else "(no run_id)"
