"""Pure parsing of a judge's reply into the step's pydantic schema."""

from __future__ import annotations

import json
import re
from typing import TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


class ReplyParseError(ValueError):
    """The reply held no JSON object valid for the schema; ``problem`` says what was wrong with it, without
    the reply (what a retry tells the judge), empty when there was no reply to correct."""

    def __init__(self, message: str, problem: str = "") -> None:
        super().__init__(message)
        self.problem = problem


class ReplyCutOff(ReplyParseError):
    """The reply stopped at the token cap before its JSON was complete: another attempt would stop there
    too, so it is not retried."""


def parse_reply(text: str | None, schema: type[M]) -> M:
    """Validate ``text`` against ``schema``, tolerating code fences and prose around the JSON object, and
    control characters (a raw line break) inside its strings, which small models write.

    >>> from pydantic import BaseModel
    >>> class Verdict(BaseModel):
    ...     verdict: str
    >>> parse_reply('Sure! ```json\\n{"verdict": "yes"}\\n```', Verdict).verdict
    'yes'
    >>> parse_reply('{"verdict": "yes,\\nsurely"}', Verdict).verdict
    'yes,\\nsurely'
    """
    if text is None or not text.strip():
        raise ReplyParseError("the judge returned an empty reply")
    last_error: ValidationError | None = None
    for candidate in _candidates(text):
        try:
            return schema.model_validate_json(candidate)
        except ValidationError as err:
            last_error = err
        if last_error.errors()[0]["type"] != "json_invalid":
            continue
        try:
            return schema.model_validate_json(_strict_json(candidate))
        except ValidationError as err:  # JSON once control characters are allowed, but not valid
            last_error = err
        except ValueError:  # not JSON even so
            pass
    problem = _describe(last_error) if last_error else "no JSON object found"
    raise ReplyParseError(f"reply is not valid {schema.__name__} JSON ({problem}): {text[:300]!r}", problem)


def _candidates(text: str) -> list[str]:
    stripped = text.strip()
    found = [stripped]
    found.extend(m.group(1).strip() for m in _FENCE.finditer(text))
    balanced = _first_balanced_object(text)
    if balanced is not None:
        found.append(balanced)
    return list(dict.fromkeys(found))


def _first_balanced_object(text: str) -> str | None:
    """The first ``{...}`` span with balanced braces, ignoring braces inside JSON strings."""
    start = text.find("{")
    while start != -1:
        depth, in_string, escaped = 0, False, False
        for i in range(start, len(text)):
            ch = text[i]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return text[start : i + 1]
        start = text.find("{", start + 1)
    return None


def _strict_json(candidate: str) -> str:
    """``candidate`` read with control characters allowed in its strings, written back as strict JSON;
    a ``ValueError`` when it is not JSON even so."""
    return json.dumps(json.loads(candidate, strict=False), ensure_ascii=False)


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    location = ".".join(str(p) for p in first["loc"]) or "<root>"
    return f"{error.error_count()} error(s), first at {location}: {first['msg']}"
