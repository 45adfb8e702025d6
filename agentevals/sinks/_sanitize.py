"""Making a record storable: values no store can hold are replaced, and the record says which.

Only on the cold path: a sink worker checks a batch after a write failed, the dead-letter file checks a
record it cannot serialize. A record is storable when its JSON form (the dead-letter line and the row
the SQL sinks build) serializes and encodes as UTF-8. What breaks that: circular or very deep
containers, bytes that are not UTF-8, objects whose ``repr`` raises, lone surrogates (``"\\ud800"``)
in any text, keys included.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from agentevals._model._result import ScoreRecord
from agentevals._store._row import record_to_json, row_json
from agentevals._support._json import jsonable
from agentevals._support._utf8 import mend_utf8

#: Containers nested deeper than this are cut (JSON serializers stop at a few hundred levels).
MAX_DEPTH = 100
_MAX_PATHS = 20  # replaced paths listed on one record; more are summarized
_MAX_PATH = 120  # characters of one path (a very deep one is cut)


def is_storable(record: ScoreRecord) -> bool:
    """Whether ``record`` serializes to a dead-letter line and to a row as UTF-8 text."""
    try:
        json.dumps(record_to_json(record), ensure_ascii=False).encode("utf-8")
        row_json(record).encode("utf-8")
    except Exception:
        return False
    return True


def sanitized(record: ScoreRecord) -> ScoreRecord:
    """``record`` with every value no store can hold replaced, and ``sanitized`` listing their paths
    (e.g. ``"request_context.loop"``, ``"reason"``); ``record`` itself when nothing needed replacing.

    Replacements: a circular reference becomes ``"<circular>"``, nesting past ``MAX_DEPTH`` becomes
    ``"<too deep>"``, non-UTF-8 bytes their ``backslashreplace`` text, an object that cannot be
    serialized (not even by ``repr``) ``"<unrepresentable TypeName>"``, a lone surrogate ``U+FFFD``.

    >>> from agentevals import ScoreResult
    >>> loop = []; loop.append(loop)
    >>> record = ScoreResult(scorer_id="s", scorer_name="s", run_id="r", score=1.0, reason="a\\ud800",
    ...                      metadata={"loop": loop})
    >>> clean = sanitized(record)
    >>> clean.reason == "a\\ufffd", clean.metadata, clean.sanitized
    (True, {'loop': ['<circular>']}, ('metadata.loop[0]', 'reason'))
    """
    paths: list[str] = []
    update: dict[str, Any] = {}
    for name, value in record.__dict__.items():
        if name == "sanitized" or _field_ok(value):
            continue
        cleaner = _Cleaner(paths)
        update[name] = cleaner.clean(value, name, 0, set())
    if not update:
        return record
    if len(paths) > _MAX_PATHS:
        paths[_MAX_PATHS:] = [f"... {len(paths) - _MAX_PATHS} more"]
    update["sanitized"] = (*record.sanitized, *paths)
    return record.model_copy(update=update)


def _field_ok(value: Any) -> bool:
    if value is None or type(value) in (int, float, bool):
        return True
    try:
        if isinstance(value, str):
            value.encode("utf-8")
        else:
            json.dumps(jsonable(value), ensure_ascii=False).encode("utf-8")
    except Exception:
        return False
    return True


class _Cleaner:
    def __init__(self, paths: list[str]) -> None:
        self.paths = paths

    def replaced(self, path: str, value: Any) -> Any:
        self.paths.append(path if len(path) <= _MAX_PATH else f"{path[: _MAX_PATH - 3]}...")
        return value

    def clean(self, value: Any, path: str, depth: int, seen: set[int]) -> Any:
        if value is None or type(value) in (int, float, bool):
            return value
        if isinstance(value, str):
            return self.text(value, path)
        if isinstance(value, bytes | bytearray):
            try:
                return bytes(value).decode("utf-8")
            except UnicodeDecodeError:
                return self.replaced(path, bytes(value).decode("utf-8", "backslashreplace"))
        if depth >= MAX_DEPTH:
            return self.replaced(path, "<too deep>")
        if id(value) in seen:
            return self.replaced(path, "<circular>")
        if isinstance(value, BaseModel):
            value = dict(value)
        elif not isinstance(value, Mapping | list | tuple | set | frozenset):
            return self.other(value, path, depth, seen)
        seen = seen | {id(value)}
        if isinstance(value, Mapping):
            out: dict[Any, Any] = {}
            for key, item in value.items():
                key = self.text(key, f"{path}.<key>") if isinstance(key, str) else key
                if not isinstance(key, str | int | float | bool) and key is not None:
                    key = self.text(_safe_repr(key), f"{path}.<key>")
                out[key] = self.clean(item, f"{path}.{key}", depth + 1, seen)
            return out
        return [self.clean(item, f"{path}[{i}]", depth + 1, seen) for i, item in enumerate(value)]

    def other(self, value: Any, path: str, depth: int, seen: set[int]) -> Any:
        """An object pydantic-core serializes by type (dataclass, datetime, ...) or by ``repr``."""
        try:
            plain = jsonable(value)
        except Exception:
            return self.replaced(path, f"<unrepresentable {type(value).__name__}>")
        return self.clean(plain, path, depth, seen | {id(value)})

    def text(self, value: str, path: str) -> str:
        mended = mend_utf8(value)
        if mended is not value:
            self.replaced(path, mended)
        return mended


def _safe_repr(value: Any) -> str:
    try:
        return repr(value)
    except Exception:
        return f"<unrepresentable {type(value).__name__}>"
