"""``agentevals export``: every stored score record as CSV or JSON Lines, one row per record joined with
a summary of its run (the input and output as text, the run's own latency, tokens and error).

Rows are streamed from the store (a server-side cursor on PostgreSQL) and written as they come, oldest
first: a large store is never held in memory.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Generator, Iterator, Mapping
from datetime import datetime
from typing import Any, Literal, TextIO

from agentevals._store import _export_reads
from agentevals._store._row import COLUMNS, JSON_COLUMNS, utc_text
from agentevals._store._store import Store

Format = Literal["csv", "jsonl"]
#: The run's columns an exported row carries, after the score's (``input``/``output`` as text).
RUN_FIELDS: tuple[str, ...] = tuple(name for name, _ in _export_reads.RUN_FIELDS)
#: The columns of an export, in order (the CSV header).
EXPORT_COLUMNS: tuple[str, ...] = (*COLUMNS, *RUN_FIELDS)
#: The exported fields stored as JSON (the score's JSON columns and the run's).
_JSON_FIELDS = (*sorted(JSON_COLUMNS), "input", "output", "ground_truth", "models")


def export(
    store: Store,
    out: TextIO,
    *,
    format: Format = "csv",
    since: datetime | None = None,
    scorer: str | None = None,
    entity: str | None = None,
    csv_escape: bool = True,
) -> int:
    """Write the score records of ``store`` (created at or after ``since``, of scorer id ``scorer``, of
    ``entity``) to ``out`` as ``format`` and return how many. CSV: the header :data:`EXPORT_COLUMNS`,
    JSON columns as JSON text, empty for null, and a text cell that a spreadsheet would run as a
    formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) prefixed with ``'``
    unless ``csv_escape`` is false (numbers stay numbers); JSON Lines: one object per record with the
    same keys, JSON columns as JSON values."""
    if format not in ("csv", "jsonl"):
        raise ValueError(f"format must be 'csv' or 'jsonl', not {format!r}")
    rows = _rows(store, since, scorer, entity)
    try:
        if format == "jsonl":
            return _write_jsonl(rows, out)
        return _write_csv(rows, out, csv_escape)
    finally:  # a write that failed (a closed pipe) leaves the cursor open: close it before the store
        rows.close()


def _rows(
    store: Store, since: datetime | None, scorer: str | None, entity: str | None
) -> Generator[dict[str, Any], None, None]:
    text = store.dialect.json_as_text  # SQLite holds JSON as text; psycopg decodes JSONB
    for row in _export_reads.scores_with_runs(store, since=since, scorer=scorer, entity=entity):
        record = dict(zip(EXPORT_COLUMNS, row, strict=True))
        if text:
            for name in _JSON_FIELDS:
                if record[name] is not None:
                    record[name] = json.loads(record[name])
        record["input"] = transcript_text(record["input"])
        record["output"] = transcript_text(record["output"])
        if isinstance(record["created_at"], datetime):
            record["created_at"] = utc_text(record["created_at"])
        yield record


def transcript_text(value: Any) -> str | None:
    """A stored input or output as text: the messages' contents (an agent input's user messages),
    one per line; a string as it is; other values as JSON.

    >>> transcript_text({"input_messages": [{"role": "user", "content": "hi"}], "system_messages": []})
    'hi'
    >>> transcript_text([{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}])
    'a\\nb'
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("input_messages"), list):
        value = value["input_messages"]
    if isinstance(value, list) and value and all(isinstance(m, Mapping) and "content" in m for m in value):
        return "\n".join(str(m["content"]) for m in value)
    return json.dumps(value, ensure_ascii=False)


def _write_jsonl(rows: Iterator[dict[str, Any]], out: TextIO) -> int:
    count = 0
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False, allow_nan=False, default=str))
        out.write("\n")
        count += 1
    return count


def _write_csv(rows: Iterator[dict[str, Any]], out: TextIO, escape: bool) -> int:
    writer = csv.writer(out)
    writer.writerow(EXPORT_COLUMNS)
    count = 0
    for row in rows:
        cells = [_cell(name, row[name]) for name in EXPORT_COLUMNS]
        writer.writerow([neutralise(c) for c in cells] if escape else cells)
        count += 1
    return count


def _cell(name: str, value: Any) -> Any:
    if value is None:
        return ""
    if name in JSON_COLUMNS or name == "models" or not isinstance(value, str | int | float):
        return json.dumps(value, ensure_ascii=False, default=str)
    return value


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutralise(cell: Any) -> Any:
    """A text cell a spreadsheet would evaluate as a formula, prefixed with ``'`` so it shows as text
    (an agent's output must not run in whoever opens the export); numbers and other text unchanged.

    >>> neutralise("=HYPERLINK(1)"), neutralise("-2"), neutralise(-2), neutralise("fine")
    ("'=HYPERLINK(1)", "'-2", -2, 'fine')
    """
    return "'" + cell if isinstance(cell, str) and cell.startswith(_FORMULA_START) else cell
