"""The message that carries one accepted run from an agent to a scoring worker.

A message is plain JSON data: ``{"v": 1, "run": {...}, "scorers": [...], "entity": ..., "accepted_at":
"<ISO-8601 UTC>"}``. ``run`` holds every :class:`~agentevals.Run` field as JSON (messages with their tool
invocations, context, metadata, trace id, error, ...), so the worker rebuilds the same run. A value
JSON cannot hold (an arbitrary object in ``metadata``) travels as its ``repr``, as in the stores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agentevals._run import Run
from agentevals.sinks._row import jsonable

#: The Dramatiq queue and actor names both sides use.
QUEUE = "agentevals"
ACTOR = "agentevals_score"
#: The message layout this release writes; a worker reads this version and older ones.
VERSION = 1


@dataclass(frozen=True)
class RemoteRun:
    """One decoded message: the run, the ids of the scorers that sampled it, the engine's default
    entity (for records whose run names none) and when the agent accepted it."""

    run: Run
    scorer_keys: tuple[str, ...]
    entity: str | None
    accepted_at: datetime


def run_message(
    run: Run, scorer_keys: Sequence[str], *, entity: str | None, accepted_at: datetime | None = None
) -> dict[str, Any]:
    """The JSON-safe message for ``run``, to be scored by the scorers named ``scorer_keys``.

    >>> message = run_message(Run(run_id="r1", input="hi", output="hello"), ["len"], entity="bot")
    >>> message["v"], message["scorers"], message["run"]["run_id"], message["entity"]
    (1, ['len'], 'r1', 'bot')
    >>> run_from_message(message).run.output_text
    'hello'
    """
    moment = accepted_at or datetime.now(UTC)
    return {
        "v": VERSION,
        "run": jsonable(run),
        "scorers": [str(key) for key in scorer_keys],
        "entity": entity,
        "accepted_at": moment.astimezone(UTC).isoformat(),
    }


def run_from_message(payload: Any) -> RemoteRun:
    """The run and scorers of a message made by :func:`run_message`; a ``ValueError`` saying what is
    wrong when ``payload`` is not such a message or was written by a newer release."""
    if not isinstance(payload, Mapping):
        raise ValueError(f"an agentevals run message is a JSON object; got {type(payload).__name__}")
    version = payload.get("v")
    if type(version) is not int or version < 1:
        raise ValueError(f"not an agentevals run message: its version 'v' is {version!r}")
    if version > VERSION:
        raise ValueError(
            f"run message version {version} is newer than this release reads ({VERSION}): upgrade "
            "agentevals-core on the workers to the agents' release"
        )
    run_data, scorers, entity = payload.get("run"), payload.get("scorers"), payload.get("entity")
    if not isinstance(run_data, Mapping):
        raise ValueError(f"run message without a 'run' object (got {type(run_data).__name__})")
    if not isinstance(scorers, list) or not all(isinstance(key, str) for key in scorers):
        raise ValueError(f"run message 'scorers' must be a list of scorer ids; got {scorers!r}")
    if entity is not None and not isinstance(entity, str):
        raise ValueError(f"run message 'entity' must be text or null; got {entity!r}")
    try:
        accepted_at = datetime.fromisoformat(str(payload.get("accepted_at")))
        run = Run.model_validate(dict(run_data))
    except ValueError as err:
        raise ValueError(f"run message {_run_id(run_data)} cannot be read: {err}") from err
    if accepted_at.tzinfo is None:
        accepted_at = accepted_at.replace(tzinfo=UTC)
    return RemoteRun(run=run, scorer_keys=tuple(scorers), entity=entity, accepted_at=accepted_at)


def _run_id(run_data: Mapping[str, Any]) -> str:
    run_id = run_data.get("run_id")
    return repr(run_id) if run_id is not None else "(no run_id)"
