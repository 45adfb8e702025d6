"""The sync face of async code: one shared event loop on a daemon thread.

Running every sync call on the same long-lived loop works the same whether or not the caller already
has a running loop (Jupyter), needs no patching of asyncio, and keeps LiteLLM's loop-bound HTTP
clients valid across calls.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def background_loop() -> asyncio.AbstractEventLoop:
    """The shared agentevals event loop, started on first use."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="agentevals-loop", daemon=True)
            thread.start()
            _loop = loop
        return _loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from synchronous code, in or out of a running event loop."""
    return run_soon(coro).result()


def run_soon(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Start ``coro`` on the shared loop from synchronous code; its future to wait on."""
    loop = background_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        coro.close()
        raise RuntimeError(
            "a sync agentevals call was made on agentevals' own event loop; await the async "
            "variant instead (e.g. `await scorer.run(...)` rather than `scorer.run_sync(...)`)"
        )
    return asyncio.run_coroutine_threadsafe(coro, loop)
