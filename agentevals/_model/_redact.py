"""Masking text in every string of a score record, and the redactor that log lines go through.

A redactor is ``(record) -> record`` (the engine's ``redact=``). :func:`mask` builds one that walks the
whole record: every string field, deeply, through dicts (keys too), lists, tuples, sets, pydantic models
(messages, tool invocations, step results, judge calls) and dataclasses; any other object is masked in
the JSON form the sinks would store.

Log lines that may hold run text (an invalid run's validation error, a judge retry's provider error, a
failed sink write) go through the engine's redactor as well: :func:`redact_text` applies it to a text,
and :func:`active_redactor` is the redactor of the engine whose scoring is running (a context variable
the engine sets), which the judge's retry log uses.
"""

from __future__ import annotations

import contextvars
import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from agentevals._model._result import ScoreFailure, ScoreRecord
from agentevals._support._json import jsonable

Redactor = Callable[[ScoreRecord], ScoreRecord]

#: Email addresses.
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
#: Phone numbers: international (``+44 20 7946 0958``) or North American (``(555) 123-4567``) shapes.
PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[\s.-]?(?:\(\d{1,4}\)|\d{1,4})(?:[\s.-]?\d{2,4}){2,4}"
    r"|\(?\d{3}\)?[\s.-]\d{3}[\s.-]\d{4})(?!\w)"
)
#: Card numbers: 13 to 19 digits, optionally grouped by spaces or dashes, starting with 2 to 6.
CREDIT_CARD = re.compile(r"(?<![\d-])[2-6](?:[ -]?\d){12,18}(?![\d-])")
#: API keys and tokens of common shapes: ``sk-...``, ``AKIA...``, ``ghp_...``, ``xoxb-...``, ``AIza...``,
#: ``Bearer ...``.
API_KEY = re.compile(
    r"\b(?:[sprk]k-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35})|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{16,}"
)
MAX_DEPTH = 100  # as the sinks' sanitizer: deeper containers are cut, never stored unmasked

_active: contextvars.ContextVar[Redactor | None] = contextvars.ContextVar("agentevals_redactor", default=None)


class Masker:
    """A redactor that replaces every match of its patterns in every string of a record, deeply.

    Made by :func:`mask`. ``masker(record)`` masks a record; ``masker.text(s)`` a string and
    ``masker.value(v)`` any value. What is unchanged is returned as is (no copy).
    """

    def __init__(self, pattern: re.Pattern[str], replacement: str) -> None:
        self.pattern = pattern
        self.replacement = replacement

    def __call__(self, record: ScoreRecord) -> ScoreRecord:
        update = {}
        for name, value in record.__dict__.items():
            masked = self.value(value)
            if masked is not value:
                update[name] = masked
        return record.model_copy(update=update) if update else record

    def __repr__(self) -> str:
        return f"mask({self.pattern.pattern!r}, replacement={self.replacement!r})"

    def text(self, text: str) -> str:
        masked, count = self.pattern.subn(self.replacement, text)
        return masked if count else text

    def value(self, value: Any) -> Any:
        return self._value(value, 0, frozenset())

    def _value(self, value: Any, depth: int, seen: frozenset[int]) -> Any:
        if value is None or type(value) in (int, float, bool):
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bytes | bytearray):
            text = bytes(value).decode("utf-8", "backslashreplace")
            masked = self.text(text)
            return value if masked is text else masked
        if depth >= MAX_DEPTH:
            return "<too deep>"
        if id(value) in seen:
            return "<circular>"
        seen = seen | {id(value)}
        if isinstance(value, BaseModel):
            return self._model(value, depth, seen)
        if isinstance(value, Mapping):
            return self._mapping(value, depth, seen)
        if isinstance(value, list | tuple | set | frozenset):
            items = [self._value(item, depth + 1, seen) for item in value]
            if all(new is old for new, old in zip(items, value, strict=True)):
                return value
            if type(value) in (tuple, set, frozenset):
                try:
                    return type(value)(items)
                except TypeError:  # an item became unhashable (its JSON form)
                    return items
            return items
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            masked_fields = self._mapping(fields, depth, seen)
            return value if masked_fields is fields else masked_fields
        return self._other(value, depth, seen)

    def _mapping(self, value: Mapping[Any, Any], depth: int, seen: frozenset[int]) -> Any:
        out: dict[Any, Any] = {}
        changed = False
        for key, item in value.items():
            new_key = self.text(key) if isinstance(key, str) else key
            new_item = self._value(item, depth + 1, seen)
            changed = changed or new_key is not key or new_item is not item
            out[new_key] = new_item
        return out if changed else value

    def _model(self, model: BaseModel, depth: int, seen: frozenset[int]) -> Any:
        fields = dict(model.__dict__)
        if model.__pydantic_extra__:
            fields.update(model.__pydantic_extra__)
        update = {}
        for name, item in fields.items():
            masked = self._value(item, depth + 1, seen)
            if masked is not item:
                update[name] = masked
        return model.model_copy(update=update) if update else model

    def _other(self, value: Any, depth: int, seen: frozenset[int]) -> Any:
        """Another object is stored as its JSON form (``repr`` as a last resort): masked in that form."""
        try:
            plain = jsonable(value)
        except Exception:
            return f"<unrepresentable {type(value).__name__}>"
        masked = self._value(plain, depth + 1, seen)
        return value if masked is plain else masked


def mask(
    patterns: re.Pattern[str] | str | Iterable[re.Pattern[str] | str], replacement: str = "<redacted>"
) -> Masker:
    """A redactor ``(record) -> record`` that replaces every match of ``patterns`` with ``replacement`` in
    every string of the record, deeply: input and output (messages, tool invocations), ground truth,
    request context, metadata (keys too), step results, every prompt, the reason, the error message,
    judge calls' errors, ids.

    ``patterns``: compiled regular expressions (such as the ready-made :data:`EMAIL`, :data:`PHONE`,
    :data:`CREDIT_CARD`, :data:`API_KEY`) and/or plain strings, which are matched literally (to use a
    regex written as a string, compile it: ``re.compile(r"...")``). Give it to the engine as
    ``redact=``; the engine also passes its log lines that may hold run text through it.

    >>> from agentevals import ScoreResult
    >>> redact = mask([EMAIL, "Project Falcon"])
    >>> record = ScoreResult(scorer_id="s", scorer_name="s", run_id="r", score=1.0,
    ...                      input={"from": "ann@example.com"}, reason="Project Falcon: ann@example.com")
    >>> masked = redact(record)
    >>> masked.input, masked.reason
    ({'from': '<redacted>'}, '<redacted>: <redacted>')
    """
    if isinstance(patterns, re.Pattern | str):
        patterns = [patterns]
    parts: list[str] = []
    for pattern in patterns:
        if isinstance(pattern, re.Pattern):
            parts.append(f"(?:{pattern.pattern})" if not pattern.flags & ~re.UNICODE else
                         f"(?{_flags(pattern.flags)}:{pattern.pattern})")  # fmt: skip
        elif isinstance(pattern, str):
            if not pattern:
                raise ValueError("mask(): an empty string would match everywhere; remove it")
            parts.append(re.escape(pattern))
        else:
            raise TypeError(
                f"mask() takes compiled regular expressions or literal strings, got {type(pattern).__name__}"
            )
    if not parts:
        raise ValueError("mask() needs at least one pattern, e.g. mask([EMAIL])")
    if not isinstance(replacement, str):
        raise TypeError(f"mask(replacement=...) must be a string, got {type(replacement).__name__}")
    return Masker(re.compile("|".join(parts)), replacement)


def _flags(flags: int) -> str:
    letters = {re.IGNORECASE: "i", re.MULTILINE: "m", re.DOTALL: "s", re.VERBOSE: "x", re.ASCII: "a"}
    return "".join(letter for flag, letter in letters.items() if flags & flag)


def redact_text(redact: Redactor | None, text: str) -> str:
    """``text`` as ``redact`` would mask it in a record, for log lines; as is without a redactor.

    A :class:`Masker` masks it directly; any other redactor sees it as the ``error_message`` of a
    stand-in record (so a redactor that leaves error messages alone leaves it alone too). A redactor that
    fails, or returns no text, gives ``"<redacted>"``: nothing unredacted is logged.
    """
    if redact is None:
        return text
    if isinstance(redact, Masker):
        return redact.text(text)
    try:
        stand_in = ScoreFailure(scorer_id="", scorer_name="", run_id="", error_type="", error_message=text)
        masked = redact(stand_in)
    except Exception:
        return "<redacted>"
    if isinstance(masked, ScoreFailure) and isinstance(masked.error_message, str):
        return masked.error_message
    return "<redacted>"


def active_redactor() -> Redactor | None:
    """The redactor of the engine scoring in this context (``None`` outside an engine or without one)."""
    return _active.get()


def set_active_redactor(redact: Redactor | None) -> None:
    """Make ``redact`` the redactor of this context and of the tasks it starts (the engine, on its loop)."""
    _active.set(redact)
