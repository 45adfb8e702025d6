"""The one place that imports LiteLLM (lazily: it costs ~2.5 s and ~150 MiB)."""

from __future__ import annotations

import asyncio
import os
import threading
from types import ModuleType
from typing import Any

from agentevals._judge._secrets import install_log_filter, reveal

_lock = threading.Lock()
_module: ModuleType | None = None


def litellm() -> ModuleType:
    """Import and configure LiteLLM once: bundled cost map (no network fetch), no debug banners, and
    the judge's secrets masked in the request logs of LiteLLM and the SDKs under it."""
    global _module
    if _module is None:
        with _lock:
            if _module is None:
                os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
                import litellm as module

                module.suppress_debug_info = True
                install_log_filter()
                _module = module
    return _module


def retryable_errors() -> tuple[type[BaseException], ...]:
    """Errors worth another attempt: rate limits, timeouts, connection problems and 5xx."""
    lm = litellm()
    return (
        lm.RateLimitError,
        lm.Timeout,
        lm.APIConnectionError,
        lm.InternalServerError,
        lm.ServiceUnavailableError,
        lm.BadGatewayError,
        TimeoutError,
        asyncio.TimeoutError,
    )


def supports_native_schema(model: str) -> bool:
    """Whether the provider accepts a JSON-schema ``response_format`` for ``model``."""
    try:
        return bool(litellm().supports_response_schema(model=model))
    except Exception:
        return False


async def acompletion(request: dict[str, Any]) -> Any:
    """Call LiteLLM; the request's secrets are revealed here, and only here."""
    return await litellm().acompletion(**reveal(request))


def reply_text(response: Any) -> str | None:
    content = response.choices[0].message.content
    return content if isinstance(content, str) else None


def usage_of(response: Any) -> tuple[int, int]:
    usage = getattr(response, "usage", None)
    if usage is None:
        return 0, 0
    return int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0)


def cost_of(response: Any) -> float | None:
    """The call's cost in USD from LiteLLM's price map, or ``None`` for an unpriced model."""
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost")
    if isinstance(cost, int | float):
        return float(cost)
    try:
        return float(litellm().completion_cost(completion_response=response))
    except Exception:
        return None
