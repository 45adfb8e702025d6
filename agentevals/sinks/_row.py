"""One mapping from a score record to a table row, shared by the SQLite, PostgreSQL and JSONL sinks.

Column names are part of the public contract (``agentevals report --db`` reads them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from pydantic_core import to_json, to_jsonable_python

from agentevals._result import ScoreFailure, ScoreRecord, ScoreResult

TABLE = "agentevals_scores"

#: (column, kind) in table order; kind is "text", "json", "real", "integer" or "timestamp".
SCHEMA: tuple[tuple[str, str], ...] = (
    ("id", "text"),
    ("created_at", "timestamp"),
    ("scorer_id", "text"),
    ("scorer_name", "text"),
    ("run_id", "text"),
    ("trace_id", "text"),
    ("entity", "text"),
    ("source", "text"),
    ("score", "real"),
    ("reason", "text"),
    ("input", "json"),
    ("output", "json"),
    ("ground_truth", "json"),
    ("request_context", "json"),
    ("preprocess_step_result", "json"),
    ("analyze_step_result", "json"),
    ("generate_score_step_result", "json"),
    ("preprocess_prompt", "text"),
    ("analyze_prompt", "text"),
    ("generate_score_prompt", "text"),
    ("generate_reason_prompt", "text"),
    ("judge_model", "text"),
    ("prompt_tokens", "integer"),
    ("completion_tokens", "integer"),
    ("cost_usd", "real"),
    ("duration_ms", "real"),
    ("error_type", "text"),
    ("error_message", "text"),
    ("failed_step", "text"),
    ("metadata", "json"),
)
COLUMNS: tuple[str, ...] = tuple(name for name, _ in SCHEMA)
JSON_COLUMNS: frozenset[str] = frozenset(name for name, kind in SCHEMA if kind == "json")
INDEXED: tuple[str, ...] = ("scorer_id", "run_id", "created_at")


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (pydantic models and dataclasses included; NaN becomes null)."""
    return to_jsonable_python(value, fallback=repr, inf_nan_mode="null")


def dumps(value: Any) -> str:
    """Compact JSON text of ``value`` (serialized in pydantic-core's Rust code: fast)."""
    if type(value) is dict and not value:  # request_context and metadata are usually empty
        return "{}"
    return to_json(value, fallback=repr, inf_nan_mode="null").decode()


def record_id(record: ScoreRecord) -> str:
    """A stable id per record (32 hex digits): re-sending a record (retry, replay) never duplicates a row."""
    key = f"{record.scorer_id}\x1f{record.run_id}\x1f{record.created_at.timestamp()!r}"
    return hashlib.blake2b(key.encode(), digest_size=16).hexdigest()


def record_to_row(record: ScoreRecord, *, json_as_text: bool | None = True) -> dict[str, Any]:
    """The row of ``record``: JSON columns as JSON text (or as plain data; ``None``: left as they are,
    for one serialization of the whole row), ``created_at`` a datetime.

    >>> from agentevals import ScoreResult
    >>> row = record_to_row(ScoreResult(scorer_id="s", scorer_name="S", run_id="r", score=1.0))
    >>> row["score"], row["input"], row["error_type"]
    (1.0, None, None)
    """
    # Keys in COLUMNS order: callers rely on ``tuple(row.values())``.
    row: dict[str, Any] = {
        "id": record_id(record),
        "created_at": record.created_at,
        "scorer_id": record.scorer_id,
        "scorer_name": record.scorer_name,
        "run_id": record.run_id,
        "trace_id": record.trace_id,
        "entity": record.entity,
        "source": record.source,
        "score": record.score,
        "reason": record.reason,
        "input": record.input,
        "output": record.output,
        "ground_truth": record.ground_truth,
        "request_context": record.request_context,
        "preprocess_step_result": record.preprocess_step_result,
        "analyze_step_result": record.analyze_step_result,
        "generate_score_step_result": record.generate_score_step_result,
        "preprocess_prompt": record.preprocess_prompt,
        "analyze_prompt": record.analyze_prompt,
        "generate_score_prompt": record.generate_score_prompt,
        "generate_reason_prompt": record.generate_reason_prompt,
        "judge_model": None,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost_usd": None,
        "duration_ms": record.duration_ms,
        "error_type": None,
        "error_message": None,
        "failed_step": None,
        "metadata": record.metadata,
    }
    calls = record.judge_calls
    if calls:
        costs = [c.cost_usd for c in calls if c.cost_usd is not None]
        row.update(
            judge_model=calls[0].model,
            prompt_tokens=sum(c.prompt_tokens for c in calls),
            completion_tokens=sum(c.completion_tokens for c in calls),
            cost_usd=sum(costs) if costs else None,
        )
    if isinstance(record, ScoreFailure):
        row.update(
            error_type=record.error_type, error_message=record.error_message, failed_step=record.failed_step
        )
    if json_as_text is None:
        return row
    for name in JSON_COLUMNS:
        value = row[name]
        if value is not None:
            row[name] = dumps(value) if json_as_text else jsonable(value)
    return row


def record_to_json(record: ScoreRecord) -> dict[str, Any]:
    """The whole record as JSON data (judge calls included), readable back by :func:`record_from_json`."""
    data: dict[str, Any] = jsonable(record)
    data["record_type"] = "failure" if isinstance(record, ScoreFailure) else "result"
    return data


def record_from_json(data: Mapping[str, Any]) -> ScoreRecord:
    """The record written by :func:`record_to_json`."""
    fields = {k: v for k, v in data.items() if k != "record_type"}
    if data.get("record_type") == "failure" or fields.get("error_type"):
        return ScoreFailure.model_validate(fields)
    return ScoreResult.model_validate(fields)
