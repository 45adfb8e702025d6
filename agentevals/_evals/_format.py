"""Short text forms of numbers and values for the result tables."""

from __future__ import annotations

from typing import Any


def number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def shorten(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
