"""One canonical text for comparing an output with an expected value (ground truth or a check's target).

Two strings are compared as they are. When either side is structured (a dict, list, number, bool, ...),
both sides become canonical JSON text: objects with sorted keys, ``1.0`` as ``1``, and a string side
that holds JSON parsed first. So a dict output equals an equal dict ground truth, or an equal JSON
string, whatever the key order; a plain string ground truth is never quoted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from agentevals._model._errors import SkipRun
from agentevals._model._messages import Message
from agentevals._model._run import Run

_NOT_JSON = object()


def output_value(run: Run, scorer_id: str) -> Any:
    """The run's output as a value: the assistant text of messages, else the plain output itself.

    An empty list is the JSON value ``[]`` here, not "no messages". Raises ``SkipRun`` (reason
    ``no_output``) when the run has no output, as every scorer that reads the output does.
    """
    output = run.output
    if output is None:
        raise SkipRun(
            f"{scorer_id} needs the agent's output, but run.output is None; pass output=", reason="no_output"
        )
    if isinstance(output, list) and output and all(isinstance(m, Message) for m in output):
        return run.output_text
    if isinstance(output, Message):
        return output.content
    return output


def is_structured(value: Any) -> bool:
    """Anything but a string: such a value is compared as canonical JSON."""
    return not isinstance(value, str)


def comparable(output: Any, expected: Any) -> tuple[str, str]:
    """``output`` and ``expected`` as the two texts to compare (see the module docstring).

    >>> comparable({"b": 2, "a": 1}, '{"a": 1.0, "b": 2}')
    ('{"a": 1, "b": 2}', '{"a": 1, "b": 2}')
    >>> comparable("Paris", "Paris")
    ('Paris', 'Paris')
    """
    if isinstance(output, str) and isinstance(expected, str):
        return output, expected
    return canonical_text(output), canonical_text(expected)


def canonical_text(value: Any) -> str:
    """``value`` as canonical JSON text; a string holding JSON is parsed first, other strings kept."""
    if isinstance(value, str):
        parsed = parse_json(value)
        if parsed is _NOT_JSON:
            return value
        value = parsed
    normalized = _normalized(value)
    try:
        return json.dumps(normalized, sort_keys=True, ensure_ascii=False, default=str)
    except TypeError:  # keys of mixed types cannot be sorted
        return json.dumps(normalized, ensure_ascii=False, default=str)


def parse_json(text: str) -> Any:
    """``text`` parsed as a JSON value, or a private sentinel when it is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_JSON


def is_json_text(value: Any) -> bool:
    return value is not _NOT_JSON


def _normalized(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return _normalized(value.model_dump(mode="json"))
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, Mapping):
        return {(k if isinstance(k, str) else str(k)): _normalized(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normalized(v) for v in value]
    return value
