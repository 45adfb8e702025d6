"""Output schemas that say how many items a judge's lists hold.

A step that asks for one verdict per listed item knows the count when it builds its prompt; its schema
says it too: ``minItems``/``maxItems`` in the JSON schema the judge is sent, which llama.cpp's grammar,
Ollama's ``format`` and OpenAI's strict schemas enforce while the reply is written. Validation enforces
the lower bound (a reply with fewer items is invalid and retried); items beyond the upper bound are kept,
and the scorers' formulas ignore them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, TypeVar, cast

from pydantic import BaseModel, Field, create_model

M = TypeVar("M", bound=BaseModel)

#: Bounds of one list field: at least this many items, and at most that many (``None``: no bound).
Count = tuple[int, int | None]


def with_item_counts(schema: type[M], **counts: int | Count) -> type[M]:
    """``schema`` with the list fields named in ``counts`` bounded: ``n`` items exactly, or
    ``(at_least, at_most)``. Without a bound to state, ``schema`` itself; the classes are made once per
    schema and counts.

    >>> from pydantic import BaseModel
    >>> class Verdicts(BaseModel):
    ...     verdicts: list[str]
    >>> three = with_item_counts(Verdicts, verdicts=3)
    >>> field = three.model_json_schema()["properties"]["verdicts"]
    >>> field["minItems"], field["maxItems"], three.__name__
    (3, 3, 'Verdicts')
    >>> with_item_counts(Verdicts, verdicts=(0, None)) is Verdicts
    True
    """
    bounds = tuple(sorted((name, *_bounds(name, count)) for name, count in counts.items()))
    if all(low == 0 and high is None for _, low, high in bounds):
        return schema
    return cast("type[M]", _counted(schema, bounds))


def _bounds(name: str, count: int | Count) -> Count:
    low, high = (count, count) if isinstance(count, int) else count
    if low < 0 or (high is not None and high < low):
        raise ValueError(f"the item count of {name!r} must be n >= 0 or (at_least, at_most), got {count!r}")
    return low, high


@lru_cache(maxsize=1024)
def _counted(schema: type[BaseModel], bounds: tuple[tuple[str, int, int | None], ...]) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    for name, low, high in bounds:
        info = schema.model_fields.get(name)
        if info is None:
            raise ValueError(f"{schema.__name__} has no field {name!r} to bound")
        default: dict[str, Any] = {} if info.is_required() else {"default": info.default}
        fields[name] = (
            info.annotation,
            Field(
                **default,
                description=info.description,
                min_length=low or None,
                json_schema_extra=None if high is None else {"maxItems": high},
            ),
        )
    model: type[BaseModel] = create_model(
        schema.__name__, __base__=schema, __module__=schema.__module__, **fields
    )
    return model
