"""Labels in files: read from CSV or JSON Lines (``agentevals labels import``), written as either
(``agentevals labels export``).

A line holds ``run_id``, ``name`` (a scorer id or a free name), ``value`` (``pass``, ``fail``, ``true``,
``false`` or a number from 0 to 1), and optionally ``labeller`` and ``note``; the other columns an export
writes (``label_id``, ``kind``, ``created_at``) are read past: an imported label is a new label.

>>> import io
>>> labels = parse_labels(io.StringIO("run_id,name,value\\nr1,helpfulness,pass\\n"), "csv", name="f.csv")
>>> [(label.run_id, label.value, label.kind) for label in labels]
[('r1', 1.0, 'pass_fail')]
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, TextIO

from agentevals._trust._labels import Label, label_value

Format = Literal["csv", "jsonl"]
#: The fields a line must have, and those it may have.
REQUIRED = ("run_id", "name", "value")
OPTIONAL = ("labeller", "note")
#: The columns of an export, in order (the import reads past ``label_id``, ``kind`` and ``created_at``).
EXPORT_FIELDS = ("label_id", "run_id", "name", "value", "kind", "labeller", "note", "created_at")
_VALUE_FIX = "write pass, fail, true, false or a number from 0 to 1"


class LabelFileError(ValueError):
    """A labels file with bad lines: ``problems`` names each (``FILE:LINE: what is wrong; the fix``)."""

    def __init__(self, problems: list[str]) -> None:
        shown = problems[:20] + ([f"... and {len(problems) - 20} more"] if len(problems) > 20 else [])
        super().__init__("\n".join(shown))
        self.problems = problems


def file_format(path: str | Path) -> Format:
    """``"csv"`` or ``"jsonl"`` from the file's extension; ``ValueError`` for another."""
    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    raise ValueError(f"{str(path)!r}: expected a .csv or .jsonl file of labels")


def read_labels(path: str | Path, *, labeller: str | None = None) -> list[Label]:
    """The labels of the file at ``path`` (see :func:`parse_labels`)."""
    kind = file_format(path)
    with open(path, encoding="utf-8-sig", newline="") as file:
        return parse_labels(file, kind, name=str(path), labeller=labeller)


def parse_labels(lines: TextIO, kind: Format, *, name: str, labeller: str | None = None) -> list[Label]:
    """The labels of ``lines`` (``labeller``: of the lines that name none). Every bad line is checked
    before anything is returned: :class:`LabelFileError` lists them all, so nothing is half-imported."""
    labels: list[Label] = []
    problems: list[str] = []
    rows = _csv_rows(lines) if kind == "csv" else _jsonl_rows(lines)
    for number, row in rows:
        try:
            if isinstance(row, str):
                raise ValueError(row)
            labels.append(_label(row, labeller))
        except ValueError as err:
            problems.append(f"{name}:{number}: {err}")
    if problems:
        raise LabelFileError(problems)
    return labels


#: A line's fields, or what is wrong with the line.
_Row = Mapping[str, Any] | str


def _csv_rows(lines: TextIO) -> Iterator[tuple[int, _Row]]:
    reader = csv.DictReader(lines)
    columns = [column.strip() for column in reader.fieldnames or []]
    missing = [field for field in REQUIRED if field not in columns]
    unknown = [column for column in columns if column not in EXPORT_FIELDS]
    if missing or unknown:
        wrong = [f"no {', '.join(missing)} column"] if missing else []
        wrong += [f"unknown column(s) {', '.join(unknown)}"] if unknown else []
        fix = "the header names the columns run_id, name, value and optionally labeller and note"
        yield 1, f"{'; '.join(wrong)}: {fix}"
        return
    reader.fieldnames = columns
    for row in reader:
        if None in row:
            yield reader.line_num, "more cells than columns: quote a cell that holds a comma"
        else:
            yield reader.line_num, row


def _jsonl_rows(lines: Iterable[str]) -> Iterator[tuple[int, _Row]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as err:
            yield number, f"not JSON ({err}): write one JSON object per line"
            continue
        yield number, data if isinstance(data, Mapping) else "not a JSON object: write one object per line"


def _label(row: Mapping[str, Any], labeller: str | None) -> Label:
    unknown = [key for key in row if key not in EXPORT_FIELDS]
    if unknown:
        fields = ", ".join(map(str, unknown))
        raise ValueError(f"unknown field(s) {fields}: use run_id, name, value, labeller and note")
    for field, fix in (
        ("run_id", "give the id of a stored run"),
        ("name", "give a scorer id (e.g. helpfulness) or a label name"),
    ):
        if not isinstance(row.get(field), str) or not row[field].strip():
            raise ValueError(f"{field} is {_shown(row.get(field))}: {fix}")
    for field in OPTIONAL:
        if row.get(field) is not None and not isinstance(row[field], str):
            raise ValueError(f"{field} is {row[field]!r}: write it as text")
    value = _value(row.get("value"))
    return Label.new(
        row["run_id"].strip(),
        row["name"].strip(),
        value,
        labeller=row.get("labeller") or labeller or "",
        note=row.get("note") or None,
    )


def _value(given: Any) -> object:
    """A line's value as :func:`label_value` takes it: text holding a number is that number."""
    text = given.strip().lower() if isinstance(given, str) else None
    if text in ("true", "false"):
        return text == "true"
    candidate: Any = given
    if text is not None and text not in ("pass", "fail"):
        try:
            candidate = float(text)
        except ValueError:
            raise ValueError(f"value is {_shown(given)}: {_VALUE_FIX}") from None
    try:
        label_value(candidate)
    except ValueError:
        raise ValueError(f"value is {_shown(given)}: {_VALUE_FIX}") from None
    return candidate


def _shown(value: Any) -> str:
    return "missing" if value is None else "empty" if value == "" else repr(value)


def write_labels(labels: Iterable[Label], out: TextIO, kind: Format) -> int:
    """Write ``labels`` to ``out`` (:data:`EXPORT_FIELDS`; a pass/fail label's value as ``pass`` or
    ``fail``) and return how many."""
    count = 0
    writer = csv.writer(out) if kind == "csv" else None
    if writer is not None:
        writer.writerow(EXPORT_FIELDS)
    for label in labels:
        value: Any = label.verdict if label.kind == "pass_fail" else label.value
        fields = [label.label_id, label.run_id, label.name, value, label.kind, label.labeller, label.note]
        fields.append(label.created_at.isoformat())
        if writer is not None:
            writer.writerow(fields)
        else:
            out.write(json.dumps(dict(zip(EXPORT_FIELDS, fields, strict=True))) + "\n")
        count += 1
    return count
