"""Eval datasets: items given inline (dicts) or loaded from JSONL, JSON, CSV or YAML files."""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_ALIASES = {
    "input": "input",
    "inputs": "turns",  # a multi-turn item, in the reference system's shape
    "turns": "turns",
    "ground_truth": "ground_truth",
    "groundTruth": "ground_truth",
    "request_context": "request_context",
    "requestContext": "request_context",
    "expected_trajectory": "expected_trajectory",
    "expectedTrajectory": "expected_trajectory",
    "metadata": "metadata",
    "id": "id",
}


@dataclass(frozen=True)
class EvalItem:
    """One dataset item: the target's ``input`` plus what the scorers compare it with.

    A multi-turn item gives its user turns instead of ``input``: ``{"inputs": ["Hi", "And then?"]}``
    (the reference system's shape) or ``{"turns": [...]}``, each turn a string or a user message dict;
    ``turns`` holds them and ``input`` is the same list (for display). The target is then called once
    per turn with the conversation carried over (see ``run_evals``).

    >>> EvalItem.of({"input": "2+2?", "groundTruth": "4"}, index=0).ground_truth
    '4'
    >>> EvalItem.of({"inputs": ["Hi", "Bye"]}, index=0).turns
    ('Hi', 'Bye')
    """

    index: int
    input: Any
    ground_truth: Any = None
    request_context: dict[str, Any] = field(default_factory=dict)
    expected_trajectory: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    turns: tuple[Any, ...] | None = None

    @classmethod
    def of(cls, raw: Any, *, index: int, where: str | None = None) -> EvalItem:
        """Validate one raw item (a mapping with ``input`` and optional fields, snake or camelCase).

        ``where`` names the item in errors (default ``"at index N"``; a file's items: ``"at
        data.jsonl:3"``).
        """
        where = where or f"at index {index}"
        if not isinstance(raw, Mapping):
            raise ValueError(
                f"Invalid data item {where}: expected a mapping like "
                f"{{'input': ..., 'ground_truth': ...}}, got {type(raw).__name__}"
            )
        found = sorted(str(k) for k in raw)
        given = [k for k in ("input", "inputs", "turns") if k in raw]
        if not given:
            raise ValueError(
                f"Invalid data item {where}: must have an 'input' key "
                f"(or 'inputs' / 'turns': a list of user turns, for a multi-turn item); keys found: {found}"
            )
        if len(given) > 1:
            raise ValueError(
                f"Invalid data item {where}: give one of {given}, not both ('input' is one "
                "call of the target, 'inputs' / 'turns' the user turns of a multi-turn item)"
            )
        unknown = sorted(str(k) for k in raw if k not in _ALIASES)
        if unknown:
            raise ValueError(
                f"Invalid data item {where}: unknown key(s) {unknown}; "
                f"allowed keys are {sorted(set(_ALIASES))}; keys found: {found}"
            )
        fields = {_ALIASES[str(k)]: v for k, v in raw.items()}
        for name in ("request_context", "metadata"):
            value = fields.get(name)
            if value is None:
                fields[name] = {}
            elif not isinstance(value, Mapping):
                raise ValueError(
                    f"Invalid data item {where}: {name!r} must be a mapping, got {type(value).__name__}"
                )
            else:
                fields[name] = dict(value)
        if fields.get("id") is not None:
            fields["id"] = str(fields["id"])
        if "turns" in fields:
            fields["turns"] = _turns(fields["turns"], where)
            fields["input"] = list(fields["turns"])
        return cls(index=index, **fields)


def _turns(value: Any, where: str) -> tuple[Any, ...]:
    """The user turns of a multi-turn item: a non-empty list of strings or user message dicts."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable) or not list(value):
        raise ValueError(
            f"Invalid data item {where}: 'inputs' / 'turns' must be a non-empty array of user "
            f"turns (strings or {{'role': 'user', 'content': ...}} messages), got {value!r:.80}"
        )
    turns = tuple(value)
    for turn in turns:
        if isinstance(turn, str):
            continue
        if not (isinstance(turn, Mapping) and turn.get("role", "user") in ("user", "human")):
            raise ValueError(
                f"Invalid data item {where}: each turn must be a string or a user message "
                f"{{'role': 'user', 'content': ...}}, got {turn!r:.80}"
            )
    return turns


def load_items(data: Iterable[Any] | str | os.PathLike[str]) -> list[EvalItem]:
    """Validate inline items, or load them from a ``.jsonl``/``.json``/``.csv``/``.yaml`` file.

    Raises ``ValueError`` for an empty dataset or an item without ``input`` (a file's item named by
    the file and its 1-based line, or its position in a JSON or YAML list).
    """
    located: list[tuple[str | None, Any]] = (
        list(load_file(data)) if isinstance(data, str | os.PathLike) else [(None, item) for item in data]
    )
    if not located:
        raise ValueError("Failed to run evals: the data is empty; pass at least one item like {'input': ...}")
    return [EvalItem.of(item, index=i, where=where) for i, (where, item) in enumerate(located)]


def load_file(path: str | os.PathLike[str]) -> list[tuple[str, Any]]:
    """Read the raw items of a dataset file, each with where it is (``"at data.jsonl:3"``, 1-based);
    the format follows the extension."""
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"dataset file {str(file)!r} does not exist")
    suffix = file.suffix.lower()
    text = file.read_text(encoding="utf-8")
    if suffix in (".jsonl", ".ndjson"):
        return _jsonl(text, file)
    if suffix == ".json":
        return _items_of(json.loads(text), file)
    if suffix == ".csv":
        return _csv(text, file)
    if suffix in (".yaml", ".yml"):
        import yaml

        return _items_of(yaml.safe_load(text), file)
    raise ValueError(
        f"unsupported dataset format {suffix or '(none)'!r} for {str(file)!r}; "
        "use .jsonl, .json, .csv, .yaml or .yml"
    )


def _jsonl(text: str, file: Path) -> list[tuple[str, Any]]:
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append((f"at {file}:{number}", json.loads(line)))
        except json.JSONDecodeError as err:
            raise ValueError(f"{file}:{number}: invalid JSON line ({err.msg})") from err
    return items


def _items_of(value: Any, file: Path) -> list[tuple[str, Any]]:
    if isinstance(value, Mapping) and isinstance(value.get("items"), list):
        value = value["items"]
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{file}: expected a list of items (or a mapping with an 'items' list)")
    return [(f"{n} of {file}", item) for n, item in enumerate(value, start=1)]


def _csv(text: str, file: Path) -> list[tuple[str, Any]]:
    """CSV rows with their line; empty cells are dropped, and cells that hold JSON objects or lists
    are parsed."""
    rows = []
    reader = csv.DictReader(text.splitlines())
    for row in reader:
        cells = {k: _cell(v) for k, v in row.items() if k is not None and v not in (None, "")}
        rows.append((f"at {file}:{reader.line_num}", cells))
    return rows


def _cell(value: str) -> Any:
    stripped = value.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError:
            return value
    return value
