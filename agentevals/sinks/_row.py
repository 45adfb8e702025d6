"""One mapping from a score record to a table row, shared by the SQLite, PostgreSQL and JSONL sinks.

Column names are part of the public contract (``agentevals report --db`` reads them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from math import isfinite
from typing import Any

from pydantic_core import to_json, to_jsonable_python

from agentevals._result import JudgeCall, ScoreFailure, ScoreRecord, ScoreResult, ScoreSkipped

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
#: The ``metadata`` key under which a stored row lists the values replaced to store it.
SANITIZED_KEY = "agentevals_sanitized"
#: The ``metadata`` keys of a skipped record's row (no column yet): ``"skipped"`` and its short reason
#: (``"no_ground_truth"``); ``reason`` holds the readable one. Other rows: ``error_type`` tells failed.
OUTCOME_KEY = "agentevals_outcome"
SKIP_REASON_KEY = "agentevals_skip_reason"


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
    return _hash_id(record.scorer_id, record.run_id, record.created_at)


def _hash_id(scorer_id: str, run_id: str, created_at: datetime) -> str:
    key = f"{scorer_id}\x1f{run_id}\x1f{created_at.timestamp()!r}"
    return hashlib.blake2b(key.encode(), digest_size=16).hexdigest()


def json_text(value: Any) -> str | None:
    """``value`` as compact JSON text; ``None`` (SQL NULL) for ``None`` and for values serialized as null."""
    if value is None:
        return None
    text = dumps(value)
    return None if text == "null" else text


def finite(value: float | None) -> float | None:
    """``value``, or ``None`` (SQL NULL) for NaN and infinities, which not every store can hold."""
    return value if value is None or isfinite(value) else None


def utc_text(moment: datetime) -> str:
    """``moment`` as ISO-8601 text in UTC, e.g. ``'2026-01-02T03:04:05+00:00'``."""
    return (moment if moment.tzinfo is UTC else moment.astimezone(UTC)).isoformat()


def sql_row(record: ScoreRecord) -> tuple[Any, ...]:
    """The row of ``record`` for the SQL sinks, in ``COLUMNS`` order: JSON columns as JSON text,
    ``created_at`` as ISO-8601 UTC text."""
    return row_values(record, json_text, utc_text)


def row_json(record: ScoreRecord) -> str:
    """The row of ``record`` as one JSON array in ``COLUMNS`` order, for a store to unpack (JSON columns
    nested as JSON, ``created_at`` as ISO-8601 UTC text, NaN as null)."""
    return to_json(row_values(record, _unchanged, utc_text), fallback=repr, inf_nan_mode="null").decode()


def row_values(
    record: ScoreRecord, encode: Callable[[Any], Any], timestamp: Callable[[datetime], Any]
) -> tuple[Any, ...]:
    """The values of ``record``'s row in ``COLUMNS`` order, JSON columns through ``encode`` and
    ``created_at`` through ``timestamp``."""
    f = record.__dict__  # the field values: much faster to read than pydantic model attributes
    error: tuple[Any, ...] = (None, None, None)
    if isinstance(record, ScoreFailure):
        error = (f["error_type"], f["error_message"], f["failed_step"])
    metadata = f["metadata"] if not f["sanitized"] else {**f["metadata"], SANITIZED_KEY: f["sanitized"]}
    if isinstance(record, ScoreSkipped):
        metadata = {**metadata, OUTCOME_KEY: "skipped", SKIP_REASON_KEY: f["skip_reason"]}
    return (
        _hash_id(f["scorer_id"], f["run_id"], f["created_at"]),
        timestamp(f["created_at"]),
        f["scorer_id"],
        f["scorer_name"],
        f["run_id"],
        f["trace_id"],
        f["entity"],
        f["source"],
        finite(f["score"]),
        f["reason"],
        encode(f["input"]),
        encode(f["output"]),
        encode(f["ground_truth"]),
        encode(f["request_context"]),
        encode(f["preprocess_step_result"]),
        encode(f["analyze_step_result"]),
        encode(f["generate_score_step_result"]),
        f["preprocess_prompt"],
        f["analyze_prompt"],
        f["generate_score_prompt"],
        f["generate_reason_prompt"],
        *judge_usage(f["judge_calls"]),
        finite(f["duration_ms"]),
        *error,
        encode(metadata),
    )


def judge_usage(calls: Sequence[JudgeCall]) -> tuple[str | None, int, int, float | None]:
    """``(judge_model, prompt_tokens, completion_tokens, cost_usd)`` of a record's judge calls."""
    if not calls:
        return (None, 0, 0, None)
    prompt = completion = 0
    cost: float | None = None
    for call in calls:
        prompt += call.prompt_tokens
        completion += call.completion_tokens
        if call.cost_usd is not None:
            cost = call.cost_usd if cost is None else cost + call.cost_usd
    return (calls[0].model, prompt, completion, finite(cost))


def record_to_row(record: ScoreRecord, *, json_as_text: bool | None = True) -> dict[str, Any]:
    """The row of ``record``: JSON columns as JSON text (or as plain data; ``None``: left as they are,
    for one serialization of the whole row), ``created_at`` a datetime.

    >>> from agentevals import ScoreResult
    >>> row = record_to_row(ScoreResult(scorer_id="s", scorer_name="S", run_id="r", score=1.0))
    >>> row["score"], row["input"], row["error_type"]
    (1.0, None, None)
    """
    encode = json_text if json_as_text else _unchanged if json_as_text is None else jsonable
    return dict(zip(COLUMNS, row_values(record, encode, _unchanged), strict=True))


def _unchanged(value: Any) -> Any:
    return value


def record_to_json(record: ScoreRecord) -> dict[str, Any]:
    """The whole record as JSON data (judge calls included), readable back by :func:`record_from_json`."""
    data: dict[str, Any] = jsonable(record)
    data["record_type"] = {"failed": "failure", "skipped": "skipped"}.get(record.outcome, "result")
    return data


def record_from_json(data: Mapping[str, Any]) -> ScoreRecord:
    """The record written by :func:`record_to_json`."""
    fields = {k: v for k, v in data.items() if k != "record_type"}
    if data.get("record_type") == "failure" or fields.get("error_type"):
        return ScoreFailure.model_validate(fields)
    if data.get("record_type") == "skipped" or fields.get("skip_reason"):
        return ScoreSkipped.model_validate(fields)
    return ScoreResult.model_validate(fields)
