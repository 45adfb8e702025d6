"""The one place that imports LiteLLM: lazily, since it costs seconds and ~150 MiB. An application
that makes judge calls imports it off its own thread (:func:`warm`), before the first call."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from functools import lru_cache, partial
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from agentevals._scoring._judge._credentials import check_credentials
from agentevals._scoring._judge._secrets import install_log_filter, reveal

logger = logging.getLogger("agentevals.judge")

_lock = threading.Lock()
_module: ModuleType | None = None

#: While set, the checks that need LiteLLM are collected here instead of run (see :func:`deferred_checks`).
_deferred: contextvars.ContextVar[list[Callable[[], None]] | None] = contextvars.ContextVar(
    "agentevals_deferred_checks", default=None
)


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


@lru_cache(maxsize=256)
def supports_native_schema(model: str) -> bool:
    """Whether the provider accepts a JSON-schema ``response_format`` for ``model``; asked of LiteLLM's
    model map once per model (not on every judge call: it costs CPU a busy worker feels)."""
    try:
        return bool(litellm().supports_response_schema(model=model))
    except Exception:
        return False


@lru_cache(maxsize=256)
def is_reasoning_model(model: str) -> bool:
    """Whether LiteLLM's model map says ``model`` reasons before it answers (its hidden reasoning counts
    against a reply cap); asked once per model."""
    try:
        return bool(litellm().supports_reasoning(model=model))
    except Exception:
        return False


async def acompletion(request: dict[str, Any]) -> Any:
    """Call LiteLLM; the request's secrets are revealed here, and only here. A pydantic class as
    ``response_format`` goes as the JSON-schema dict LiteLLM itself makes of it, made once per class."""
    call = reveal(request)
    schema = call.get("response_format")
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        # A fresh dict each call: LiteLLM may edit what it is given.
        call["response_format"] = json.loads(_response_format_text(schema))
    return await litellm().acompletion(**call)


@lru_cache(maxsize=256)
def _response_format_text(schema: type[BaseModel]) -> str:
    """The ``response_format`` LiteLLM would send for ``schema``, as JSON text. LiteLLM converts a class on
    every call, twice; a dict it sends as given."""
    litellm()
    from litellm.llms.base_llm.base_utils import type_to_response_format_param

    return json.dumps(type_to_response_format_param(schema))


def reply_text(response: Any) -> str | None:
    content = response.choices[0].message.content
    return content if isinstance(content, str) else None


def is_bad_request(error: BaseException) -> bool:
    """Whether the provider (or LiteLLM, for a parameter it knows the provider lacks) refused the request."""
    return isinstance(error, litellm().BadRequestError)


def finish_reason(response: Any) -> str | None:
    """Why the model stopped (``"length"``: the reply hit the token cap)."""
    reason = getattr(response.choices[0], "finish_reason", None)
    return reason if isinstance(reason, str) else None


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


def warm(then: Callable[[], None] | None = None) -> None:
    """Import LiteLLM now, on the calling thread, then run ``then``. A failed import is logged; the first
    judge call tries again and reports the error with its run."""
    try:
        litellm()
    except Exception:
        logger.warning("agentevals: importing LiteLLM failed", exc_info=True)
        return
    if then is not None:
        then()


def warm_up_in_background(then: Callable[[], None] | None = None) -> None:
    """:func:`warm` on a daemon thread of its own, so that neither the caller nor an event loop waits for
    the import (an engine at construction, a worker while it connects)."""
    threading.Thread(target=warm, args=(then,), name="agentevals-litellm-warm-up", daemon=True).start()


async def imported() -> None:
    """Wait, without blocking the loop, until LiteLLM is imported (a warm-up may be under way on another
    thread): a scorer awaits it before its timeout starts, so no timeout counts the import. A failed
    import is left to the judge call, which reports it with its run."""
    if _module is None:
        with contextlib.suppress(Exception):
            await asyncio.to_thread(litellm)


@contextlib.contextmanager
def deferred_checks() -> Iterator[list[Callable[[], None]]]:
    """Within it, :func:`check_model` leaves the part of a check that needs LiteLLM (a model of a provider
    :mod:`~agentevals._scoring._judge._credentials` does not know) in the list it yields, to be run later
    off the caller's thread, instead of importing LiteLLM."""
    checks: list[Callable[[], None]] = []
    token = _deferred.set(checks)
    try:
        yield checks
    finally:
        _deferred.reset(token)


def check_model(model: str, *, api_base: str | None, has_key: bool) -> None:
    """Raise ``ValueError`` (saying how to fix it) when ``model`` cannot be routed or its provider's
    credentials are missing; makes no network call. The common providers' keys are checked without
    LiteLLM; LiteLLM is asked only about the other models (later, inside :func:`deferred_checks`)."""
    if check_credentials(model, api_base=api_base, has_key=has_key):
        return
    check = partial(_check_with_litellm, model, api_base=api_base, has_key=has_key)
    deferred = _deferred.get()
    if deferred is None:
        check()
    else:
        deferred.append(check)


def _check_with_litellm(model: str, *, api_base: str | None, has_key: bool) -> None:
    lm = litellm()
    try:
        lm.get_llm_provider(model, api_base=api_base)
    except Exception:  # LiteLLM's own text is a page of provider links
        raise ValueError(
            f"judge model {model!r} is not one LiteLLM can route (it names no provider); "
            "write it as 'provider/model', e.g. 'openai/gpt-4o-mini' or 'anthropic/claude-3-5-haiku-latest'"
        ) from None
    if has_key:
        return
    env = lm.validate_environment(model=model, api_base=api_base)
    missing = env.get("missing_keys") or []
    if missing and not env.get("keys_in_environment"):
        raise ValueError(
            f"judge model {model!r} needs {' and '.join(missing)} in the environment "
            "(or pass Judge(api_key=...))"
        )


_PREFIX = re.compile(r"(?:litellm\.)?[A-Za-z]*(?:Error|Exception)(?::|\s+-)\s*")


def describe_error(error: BaseException) -> str:
    """``Type: message`` with the prefixes LiteLLM repeats stripped: ``InternalServerError:
    litellm.InternalServerError: InternalServerError: OpenAIException - boom`` reads
    ``InternalServerError: boom``."""
    text = str(error)
    while match := _PREFIX.match(text):
        text = text[match.end() :]
    return f"{type(error).__name__}: {text.strip() or type(error).__name__}"
