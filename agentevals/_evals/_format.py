"""Short text forms of numbers and values for the result tables."""

from __future__ import annotations

from typing import Any


def number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def usd(value: float | None) -> str:
    """A cost in dollars to 4 decimals; a cost under that shows as under it, not as nothing.

    >>> usd(0.01234), usd(0.0000042), usd(0.0), usd(None)
    ('$0.0123', '<$0.0001', '$0.0000', '-')
    """
    if value is None:
        return "-"
    return "<$0.0001" if 0 < value < 0.0001 else f"${value:.4f}"


def share(passed: int, total: int) -> str:
    """A pass rate with its denominator.

    >>> share(38, 40), share(0, 0)
    ('38/40 (95.0%)', '0/0')
    """
    return f"{passed}/{total}" + (f" ({passed / total:.1%})" if total else "")


def shorten(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
