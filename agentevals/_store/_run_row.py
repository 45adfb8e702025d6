"""A stored runs row back as the :class:`Run` it was written from (for re-scoring after the fact)."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import from_json

from agentevals._model._messages import AgentInput, Message
from agentevals._model._run import Run, looks_like_agent_input
from agentevals._store._row import RUN_JSON_COLUMNS


def run_from_row(row: dict[str, Any], *, json_as_text: bool) -> Run:
    """The :class:`Run` of one ``agentevals_runs`` row (JSON columns as JSON text, or as data)."""
    if json_as_text:
        for name in RUN_JSON_COLUMNS:
            if row[name] is not None:
                row[name] = from_json(row[name])
    return Run(
        run_id=row["run_id"],
        input=_input(row["input"]),
        output=_output(row["output"]),
        ground_truth=row["ground_truth"],
        request_context=row["request_context"] or {},
        trace_id=row["trace_id"],
        entity=row["entity"],
        context=_context(row["context"]),
        error=row["error"],
        started_at=_moment(row["started_at"]),
        duration_ms=row["duration_ms"],
        metadata=row["metadata"] or {},
    )


def _input(value: Any) -> Any:
    # What Run's validator does, in one pydantic call rather than one per message (reading is the
    # slow part of a re-score).
    if isinstance(value, dict) and looks_like_agent_input(value):
        return AgentInput.model_validate(value)
    return value


def _output(value: Any) -> Any:
    if isinstance(value, list) and value and all(isinstance(m, dict) and "role" in m for m in value):
        return _messages().validate_python(value)
    return value


@functools.cache
def _messages() -> TypeAdapter[list[Message]]:
    return TypeAdapter(list[Message])


def _context(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [item if isinstance(item, str) else json.dumps(item) for item in value]
    return [str(value)]


def _moment(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value))
