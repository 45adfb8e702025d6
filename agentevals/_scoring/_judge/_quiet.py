"""LiteLLM's INFO lines silenced while agentevals calls a judge.

LiteLLM logs a line at INFO for every call (``LiteLLM completion() model= ...; provider = ...``), through
its own handler and again through the root logger's: two lines a judge call, half of a busy worker's
log. While a judge call runs (and in the callbacks LiteLLM starts from it, which inherit its context),
a filter on LiteLLM's loggers drops their records below WARNING. The application's own LiteLLM calls
keep their lines, and no logger's level or handlers change. ``AGENTEVALS_DEBUG=1`` in the environment
(``agentevals worker --verbose`` sets it) keeps them all.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

#: The environment variable that keeps LiteLLM's INFO lines during judge calls (``1``, ``true``, ``yes``).
DEBUG_ENV = "AGENTEVALS_DEBUG"
_LOGGERS = ("LiteLLM", "LiteLLM Router")
_judging: ContextVar[bool] = ContextVar("agentevals_judging", default=False)
_lock = threading.Lock()
_installed = False


class _QuietFilter(logging.Filter):
    """Drops LiteLLM's records below WARNING logged on behalf of a judge call."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or not _judging.get()


_FILTER = _QuietFilter()


def debug_requested() -> bool:
    """Whether ``AGENTEVALS_DEBUG`` asks for every log line (read at each call: a test or an operator
    may set it at any time)."""
    return os.environ.get(DEBUG_ENV, "").strip().lower() in ("1", "true", "yes", "on")


@contextmanager
def quiet_litellm() -> Iterator[None]:
    """Around a judge call: LiteLLM's INFO and DEBUG lines about it are dropped (unless
    :func:`debug_requested`)."""
    if debug_requested():
        yield
        return
    _install()
    token = _judging.set(True)
    try:
        yield
    finally:
        _judging.reset(token)


def _install() -> None:
    """Put the filter on LiteLLM's loggers once (creating them is harmless: LiteLLM gets the same ones)."""
    global _installed
    if _installed:
        return
    with _lock:
        for name in _LOGGERS:
            logger = logging.getLogger(name)
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)
        _installed = True
