"""Any value as plain JSON data, the form records and runs are stored and sent in."""

from __future__ import annotations

from typing import Any

from pydantic_core import to_jsonable_python


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (pydantic models and dataclasses included; NaN becomes null).

    >>> jsonable({"score": float("nan"), "at": (1, 2)})
    {'score': None, 'at': [1, 2]}
    """
    return to_jsonable_python(value, fallback=repr, inf_nan_mode="null")
