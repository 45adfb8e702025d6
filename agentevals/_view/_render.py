"""Jinja2 templates (autoescaped) and the helpers they use; chart data goes into a page as JSON in a
``<script type="application/json">`` element with ``<``, ``>`` and ``&`` escaped, never into code."""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any

from agentevals._evals._format import usd as dollars
from agentevals._trust._stats import Estimate

HERE = Path(__file__).parent
STATIC = HERE / "static"
#: The files a page loads, in order (the report inlines them).
STYLES = ("vendor/uPlot.min.css", "app.css")
SCRIPTS = ("vendor/uPlot.iife.min.js", "charts.js", "deferred.js")


def json_script(data: Any) -> str:
    """``data`` as JSON that is safe inside a ``<script>`` element (no ``</script>``, no ``<!--``).

    >>> json_script({"x": "</script><b>"})
    '{"x": "\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e"}'
    """
    text = json.dumps(data, allow_nan=False, default=_plain)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _plain(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__"):
        return {name: getattr(value, name) for name in value.__dataclass_fields__}
    return str(value)


def num(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return f"{value:.{digits}f}"


def pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def interval(value: Estimate | None) -> str:
    """An estimate with its 95% interval (``–`` for none).

    >>> interval(Estimate(0.8125, 0.7, 0.9))
    '0.812 [0.700, 0.900]'
    """
    return "–" if value is None else str(value)


def rate(value: Estimate | None) -> str:
    """A share with its 95% interval, in percent (``–`` for none).

    >>> rate(Estimate(0.667, 0.586, 0.748))
    '66.7% [58.6, 74.8]'
    """
    if value is None:
        return "–"
    return f"{value.value * 100:.1f}% [{value.low * 100:.1f}, {value.high * 100:.1f}]"


def usd(value: float | None) -> str:
    return "–" if value is None else dollars(value)


def short(value: str | None, limit: int = 120) -> str:
    text = " ".join((value or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@cache
def environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(num=num, pct=pct, usd=usd, short=short, interval=interval, rate=rate)
    env.globals.update(STYLES=STYLES, SCRIPTS=SCRIPTS)
    return env


def render(template: str, **context: Any) -> str:
    """``template`` rendered; ``charts`` (any JSON data) is embedded with :func:`json_script`.
    ``inline=True`` puts the CSS and JS in the page itself (the self-contained report)."""
    from markupsafe import Markup

    inline = context.pop("inline", False)
    assets: dict[str, Any] = {"styles": [], "scripts": []}
    if inline:
        assets["styles"] = [Markup(_asset(name)) for name in STYLES]
        assets["scripts"] = [Markup(_asset(name).replace("</script", "<\\/script")) for name in SCRIPTS]
    charts = Markup(json_script(context.pop("charts", {})))
    page: str = (
        environment().get_template(template).render(inline=inline, assets=assets, charts=charts, **context)
    )
    return page


@cache
def _asset(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")
