"""Flush on SIGTERM, the way containers and Kubernetes stop a service, then let the process go on as
it would have: the application's own handler runs afterwards, the default one still ends the process.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, Protocol

logger = logging.getLogger("agentevals.engine")

_Previous = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


class _Engine(Protocol):
    def flush(self, timeout: float = ...) -> Any: ...

    def shutdown(self, timeout: float = ...) -> Any: ...


class SigtermFlush:
    """A SIGTERM handler that flushes ``engine`` within ``timeout`` seconds, then chains to the handler
    it replaced: a Python handler is called with the same arguments (the engine was only flushed, the
    application decides whether to exit); ``SIG_DFL`` is restored and the signal raised again, so the
    process ends as it would have (the engine is shut down first); ``SIG_IGN`` stays ignored.
    """

    def __init__(self, engine: _Engine, timeout: float, previous: _Previous) -> None:
        self.engine: _Engine | None = engine
        self.timeout = timeout
        self.previous = previous

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        engine, previous = self.engine, self.previous
        if engine is not None:
            default = previous in (signal.SIG_DFL, None)
            try:
                report = (engine.shutdown if default else engine.flush)(self.timeout)
                logger.info("agentevals: flushed on SIGTERM: %s", report)
            except BaseException:  # the chain below must run whatever happened here
                logger.exception("agentevals: flushing on SIGTERM failed")
        if callable(previous):
            previous(signum, frame)
        elif previous in (signal.SIG_DFL, None):
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    def release(self) -> None:
        """Stop flushing (the engine shut down); put the previous handler back if this one is still
        installed and we are on the main thread, else stay in the chain as a plain pass-through."""
        self.engine = None
        if threading.current_thread() is not threading.main_thread():
            return
        previous = self.previous if self.previous is not None else signal.SIG_DFL
        try:
            if signal.getsignal(signal.SIGTERM) is self:
                signal.signal(signal.SIGTERM, previous)
        except (ValueError, OSError):  # pragma: no cover - interpreter shutting down
            pass


def install_sigterm_flush(engine: _Engine, timeout: float) -> SigtermFlush | None:
    """Install a :class:`SigtermFlush` for ``engine``; ``None`` when not on the main thread (only it may
    set signal handlers) or where there is no SIGTERM."""
    if not hasattr(signal, "SIGTERM") or threading.current_thread() is not threading.main_thread():
        return None
    try:
        handler = SigtermFlush(engine, timeout, signal.getsignal(signal.SIGTERM))
        signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError) as err:  # pragma: no cover - embedded interpreters
        logger.debug("agentevals: no SIGTERM handler installed: %s", err)
        return None
    return handler
