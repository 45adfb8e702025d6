"""One mapping from a score record to its table rows (its scores row, and its run's row), shared by
the SQLite, PostgreSQL and JSONL sinks.

Column names are part of the public contract (``agentevals report --db`` reads them).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from math import isfinite
from typing import Any

from pydantic_core import to_json

from agentevals._model._result import JudgeCall, ScoreFailure, ScoreRecord, ScoreResult, ScoreSkipped
from agentevals._support._json import jsonable

TABLE = "agentevals_scores"
#: The layout this library writes: one row per run (``agentevals_runs``), one per (run, scorer) that
#: points at it (``agentevals_scores``), the per-hour aggregates and score histogram the database keeps
#: with triggers (``agentevals_rollup``, ``agentevals_bins``) and when each scorer version first appears
#: (``agentevals_versions``, kept the same way), each scorer's pass threshold (``agentevals_scorers``),
#: the runs the engine dropped (``agentevals_drops``) and people's labels of runs
#: (``agentevals_labels``). The store records it in ``agentevals_meta`` under :data:`SCHEMA_VERSION_KEY`;
#: a store without that record is refused, a store of version 1 (no labels or versions table) gains
#: them when opened.
SCHEMA_VERSION = 2
SCHEMA_VERSION_KEY = "schema_version"

#: ``agentevals_scores``: (column, kind) in table order; kind is "text", "json", "real", "integer",
#: "timestamp" (never null) or "timestamp_null".
SCHEMA: tuple[tuple[str, str], ...] = (
    ("id", "text"),
    ("created_at", "timestamp"),
    ("run_id", "text"),
    ("scorer_id", "text"),
    ("scorer_name", "text"),
    ("scorer_version", "text"),
    ("outcome", "text"),
    ("skip_reason", "text"),
    ("score", "real"),
    ("raw_score", "real"),
    ("reason", "text"),
    ("entity", "text"),
    ("source", "text"),
    ("eval_id", "text"),
    ("preprocess_step_result", "json"),
    ("analyze_step_result", "json"),
    ("generate_score_step_result", "json"),
    ("preprocess_prompt", "text"),
    ("analyze_prompt", "text"),
    ("generate_score_prompt", "text"),
    ("generate_reason_prompt", "text"),
    ("judge_replies", "json"),
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
#: ``agentevals_runs``: one row per run, its transcript and what the agent spent.
RUN_SCHEMA: tuple[tuple[str, str], ...] = (
    ("run_id", "text"),
    ("created_at", "timestamp"),
    ("trace_id", "text"),
    ("parent_id", "text"),
    ("thread_id", "text"),
    ("entity", "text"),
    ("source", "text"),
    ("eval_id", "text"),
    ("models", "json"),
    ("input", "json"),
    ("output", "json"),
    ("ground_truth", "json"),
    ("request_context", "json"),
    ("context", "json"),
    ("started_at", "timestamp_null"),
    ("duration_ms", "real"),
    ("input_tokens", "integer"),
    ("output_tokens", "integer"),
    ("cost_usd", "real"),
    ("error", "text"),
    ("metadata", "json"),
)
COLUMNS: tuple[str, ...] = tuple(name for name, _ in SCHEMA)
RUN_COLUMNS: tuple[str, ...] = tuple(name for name, _ in RUN_SCHEMA)
JSON_COLUMNS: frozenset[str] = frozenset(name for name, kind in SCHEMA if kind == "json")
RUN_JSON_COLUMNS: frozenset[str] = frozenset(name for name, kind in RUN_SCHEMA if kind == "json")
#: (index name suffix, columns) of the scores and the runs tables (the unique index on ``id`` aside).
INDEXES: tuple[tuple[str, str], ...] = (
    ("scorer_created", "scorer_id, created_at"),
    ("run", "run_id"),
    ("entity_created", "entity, created_at"),
    ("eval", "eval_id"),
)
RUN_INDEXES: tuple[tuple[str, str], ...] = (("entity_created", "entity, created_at"),)
#: The ``metadata`` key under which a stored row lists the values replaced to store it.
SANITIZED_KEY = "agentevals_sanitized"
#: The metadata key under which a stored row keeps its record's ``judge_input_flags``.
JUDGE_INPUT_FLAGS_KEY = "agentevals_judge_input_flags"
#: Namespace of the record ids (uuid5 of run, scorer, version and evaluation).
_ID_NAMESPACE = uuid.UUID("5b0d4c1e-3f7a-5e61-9a53-0a6e1c1a7e52")
_ID_NAMESPACE_BYTES = _ID_NAMESPACE.bytes


@dataclass(frozen=True)
class Tables:
    """The tables of one store: ``scores`` is the name given to a sink (``table=``); the others share its
    prefix (``agentevals_scores`` -> ``agentevals_runs``, ``agentevals_meta``, ...).

    >>> tables("agentevals_scores")
    Tables(scores='agentevals_scores', runs='agentevals_runs', meta='agentevals_meta')
    >>> tables("evals").runs
    'evals_runs'
    """

    scores: str
    runs: str
    #: Key-value facts about the store, its schema version among them (see :data:`SCHEMA_VERSION`).
    meta: str

    @property
    def rollup(self) -> str:
        """The per-hour aggregates of the scores (``agentevals_rollup``, see ``_rollup``)."""
        return f"{self.runs[: -len('_runs')]}_rollup"

    @property
    def bins(self) -> str:
        """The per-hour score histogram (``agentevals_bins``, see ``_bins``)."""
        return f"{self.runs[: -len('_runs')]}_bins"

    @property
    def versions(self) -> str:
        """When each scorer version first appears (``agentevals_versions``, see ``_versions``)."""
        return f"{self.runs[: -len('_runs')]}_versions"

    @property
    def scorers(self) -> str:
        """Each scorer's name, version and pass threshold (``agentevals_scorers``, see ``_catalog``)."""
        return f"{self.runs[: -len('_runs')]}_scorers"

    @property
    def drops(self) -> str:
        """Runs the engine dropped, per hour, entity, scorer and reason (``agentevals_drops``)."""
        return f"{self.runs[: -len('_runs')]}_drops"

    @property
    def labels(self) -> str:
        """People's labels of runs (``agentevals_labels``, see ``_labels``)."""
        return f"{self.runs[: -len('_runs')]}_labels"


def tables(table: str) -> Tables:
    """The tables of the store whose scores table is ``table``."""
    base = table[: -len("_scores")] if table.endswith("_scores") and len(table) > 7 else table
    return Tables(scores=table, runs=f"{base}_runs", meta=f"{base}_meta")


def replace_on_conflict(schema: tuple[tuple[str, str], ...] = SCHEMA) -> str:
    """The clause that makes an insert of score rows replace the row of the same ``id`` (SQLite and
    PostgreSQL spell it alike).

    >>> replace_on_conflict((("id", "text"), ("score", "real")))
    'ON CONFLICT (id) DO UPDATE SET score = excluded.score'
    """
    updates = ", ".join(f"{name} = excluded.{name}" for name, _ in schema if name != "id")
    return f"ON CONFLICT (id) DO UPDATE SET {updates}"


def last_per_id(records: Sequence[ScoreRecord]) -> list[ScoreRecord]:
    """``records`` without those a later record of the same id replaces (one statement may not update
    a row twice in PostgreSQL)."""
    latest = {record_id(record): record for record in records}
    return list(latest.values()) if len(latest) < len(records) else list(records)


def dumps(value: Any) -> str:
    """Compact JSON text of ``value`` (serialized in pydantic-core's Rust code: fast)."""
    if type(value) is dict and not value:  # request_context and metadata are usually empty
        return "{}"
    return to_json(value, fallback=repr, inf_nan_mode="null").decode()


def record_id(record: ScoreRecord) -> str:
    """A record's id (32 hex digits): a uuid5 of its run, scorer and scorer version (and evaluation and
    repeat for ``run_evals`` records), so a re-sent record (retry, replay, redelivery) adds no row."""
    return _record_id(record.__dict__)


def _record_id(f: Mapping[str, Any]) -> str:
    eval_id = f["eval_id"] or _metadata_text(f["metadata"], "eval_id")
    repeat = f["metadata"].get("repeat") if eval_id else None
    key = f"{f['run_id']}\x1f{f['scorer_id']}\x1f{f['scorer_version'] or ''}\x1f{eval_id or ''}\x1f{repeat!r}"
    return uuid5_hex(key)


def uuid5_hex(name: str) -> str:
    """``uuid.uuid5(_ID_NAMESPACE, name).hex``, without building ``UUID`` objects (a third of the cost of
    a stored row's values went there).

    >>> uuid5_hex("run-1") == uuid.uuid5(_ID_NAMESPACE, "run-1").hex
    True
    """
    digest = bytearray(hashlib.sha1(_ID_NAMESPACE_BYTES + name.encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    return digest.hex()


def _metadata_text(metadata: Mapping[str, Any], *keys: str) -> str | None:
    """The first of ``keys`` that ``metadata`` holds, as text."""
    for key in keys:
        value = metadata.get(key)
        if value is not None and value != "":
            return value if type(value) is str else str(value)
    return None


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
    """The scores row of ``record`` for the SQL sinks, in ``COLUMNS`` order: JSON columns as JSON
    text, ``created_at`` as ISO-8601 UTC text."""
    return row_values(record, json_text, utc_text)


def row_json(record: ScoreRecord) -> str:
    """The scores row of ``record`` as one JSON array in ``COLUMNS`` order, for a store to unpack (JSON
    columns nested as JSON, ``created_at`` as ISO-8601 UTC text, NaN as null)."""
    return to_json(row_values(record, _unchanged, utc_text), fallback=repr, inf_nan_mode="null").decode()


def run_sql_row(record: ScoreRecord) -> tuple[Any, ...]:
    """The runs row of ``record``'s run, in ``RUN_COLUMNS`` order (as :func:`sql_row`)."""
    return run_values(record, json_text, utc_text)


def run_row_json(record: ScoreRecord) -> str:
    """The runs row of ``record``'s run as one JSON array in ``RUN_COLUMNS`` order (as :func:`row_json`)."""
    return to_json(run_values(record, _unchanged, utc_text), fallback=repr, inf_nan_mode="null").decode()


def first_per_run(records: Sequence[ScoreRecord]) -> list[ScoreRecord]:
    """The first record of each run in ``records``: the one its runs row is built from."""
    seen: dict[str, ScoreRecord] = {}
    for record in records:
        seen.setdefault(record.run_id, record)
    return list(seen.values())


def _metadata(f: Mapping[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = f["metadata"]
    if f["sanitized"]:
        metadata = {**metadata, SANITIZED_KEY: f["sanitized"]}
    if f["judge_input_flags"]:
        metadata = {**metadata, JUDGE_INPUT_FLAGS_KEY: f["judge_input_flags"]}
    return metadata


def row_values(
    record: ScoreRecord, encode: Callable[[Any], Any], timestamp: Callable[[datetime], Any]
) -> tuple[Any, ...]:
    """The values of ``record``'s scores row in ``COLUMNS`` order, JSON columns through ``encode`` and
    ``created_at`` through ``timestamp``. The run's transcript is in its runs row (:func:`run_values`)."""
    f = record.__dict__  # the field values: much faster to read than pydantic model attributes
    error: tuple[Any, ...] = (None, None, None)
    outcome, skip_reason = "scored", None
    if isinstance(record, ScoreFailure):
        error = (f["error_type"], f["error_message"], f["failed_step"])
        outcome = "failed"
    elif isinstance(record, ScoreSkipped):
        outcome, skip_reason = "skipped", f["skip_reason"]
    metadata = _metadata(f)
    return (
        _record_id(f),
        timestamp(f["created_at"]),
        f["run_id"],
        f["scorer_id"],
        f["scorer_name"],
        f["scorer_version"],
        outcome,
        skip_reason,
        finite(f["score"]),
        finite(f.get("raw_score")),
        f["reason"],
        f["entity"],
        f["source"],
        f["eval_id"] or _metadata_text(metadata, "eval_id"),
        encode(f["preprocess_step_result"]),
        encode(f["analyze_step_result"]),
        encode(f["generate_score_step_result"]),
        f["preprocess_prompt"],
        f["analyze_prompt"],
        f["generate_score_prompt"],
        f["generate_reason_prompt"],
        encode(f["judge_replies"] or None),
        *judge_usage(f["judge_calls"]),
        finite(f["duration_ms"]),
        *error,
        encode(metadata),
    )


def run_values(
    record: ScoreRecord, encode: Callable[[Any], Any], timestamp: Callable[[datetime], Any]
) -> tuple[Any, ...]:
    """The values of the runs row of ``record``'s run in ``RUN_COLUMNS`` order. Models, token usage and
    cost come from the run's metadata when an integration put them there (``models``, ``usage`` with
    ``input_tokens``/``output_tokens`` or ``prompt_tokens``/``completion_tokens``, ``cost_usd``);
    parent and thread ids from ``parent_run_id``/``parent_id`` and ``thread_id``/``session_id``."""
    f = record.__dict__
    metadata = _metadata(f)
    usage = metadata.get("usage")
    if not isinstance(usage, Mapping):
        usage = {}
    started = f["run_started_at"]
    return (
        f["run_id"],
        timestamp(f["created_at"]),
        f["trace_id"],
        _metadata_text(metadata, "parent_run_id", "parent_id"),
        _metadata_text(metadata, "thread_id", "session_id", "conversation_id"),
        f["entity"],
        f["source"],
        f["eval_id"] or _metadata_text(metadata, "eval_id"),
        encode(_models(metadata)),
        encode(f["input"]),
        encode(f["output"]),
        encode(f["ground_truth"]),
        encode(f["request_context"]),
        encode(f["context"] or None),
        None if started is None else timestamp(started),
        finite(f["run_duration_ms"]),
        _count(usage, "input_tokens", "prompt_tokens"),
        _count(usage, "output_tokens", "completion_tokens"),
        _cost(metadata.get("cost_usd", usage.get("cost_usd", usage.get("cost")))),
        f["run_error"],
        encode(metadata),
    )


def _models(metadata: Mapping[str, Any]) -> list[str] | None:
    models = metadata.get("models")
    if isinstance(models, list | tuple) and models:
        return [str(m) for m in models]
    model = metadata.get("model")
    return [model] if isinstance(model, str) and model else None


def _count(usage: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = usage.get(key)
        if type(value) is int:
            return value
    return None


def _cost(value: Any) -> float | None:
    return finite(float(value)) if type(value) in (int, float) else None


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
    """The scores row of ``record``: JSON columns as JSON text (or as plain data; ``None``: left as they
    are, for one serialization of the whole row), ``created_at`` a datetime.

    >>> from agentevals import ScoreResult
    >>> row = record_to_row(ScoreResult(scorer_id="s", scorer_name="S", run_id="r", score=1.0))
    >>> row["score"], row["outcome"], row["error_type"]
    (1.0, 'scored', None)
    """
    encode = json_text if json_as_text else _unchanged if json_as_text is None else jsonable
    return dict(zip(COLUMNS, row_values(record, encode, _unchanged), strict=True))


def run_to_row(record: ScoreRecord, *, json_as_text: bool | None = True) -> dict[str, Any]:
    """The runs row of ``record``'s run (as :func:`record_to_row`).

    >>> from agentevals import ScoreResult
    >>> row = run_to_row(ScoreResult(scorer_id="s", scorer_name="S", run_id="r", score=1.0, input="hi",
    ...                              metadata={"models": ["gpt-4o"], "usage": {"input_tokens": 12}}))
    >>> row["input"], row["models"], row["input_tokens"]
    ('"hi"', '["gpt-4o"]', 12)
    """
    encode = json_text if json_as_text else _unchanged if json_as_text is None else jsonable
    return dict(zip(RUN_COLUMNS, run_values(record, encode, _unchanged), strict=True))


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
