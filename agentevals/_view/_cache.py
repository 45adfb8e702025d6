"""Computed pages kept per store fingerprint, served stale while a refresh runs.

A big store's overview takes seconds to compute; a changed store (a live agent writing) would make
every visit wait that long. So a page whose store changed is served from the last computation at
once while one background thread recomputes it; only a page never computed makes its visitor wait,
and concurrent visitors of it share one computation.

>>> cache = Cache()
>>> cache.get("k", 1, lambda: "first"), cache.get("k", 1, lambda: "again")
('first', 'first')
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Cache:
    def __init__(self, size: int = 64) -> None:
        self._items: OrderedDict[Any, tuple[Any, Any]] = OrderedDict()
        self._running: dict[Any, threading.Event] = {}
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: Any, fingerprint: Any, compute: Callable[[], T]) -> T:
        """The value for ``key``: cached when computed at ``fingerprint``; else the stale value with a
        refresh started in the background; else computed now (once, however many callers wait)."""
        while True:
            with self._lock:
                hit = self._items.get(key)
                if hit is not None and hit[0] == fingerprint:
                    self._items.move_to_end(key)
                    return hit[1]  # type: ignore[no-any-return]
                running = self._running.get(key)
                owner = running is None
                if running is None:
                    running = self._running[key] = threading.Event()
            if hit is not None:
                if owner:
                    threading.Thread(
                        target=self._fill, args=(key, fingerprint, compute, running), daemon=True
                    ).start()
                return hit[1]  # type: ignore[no-any-return]
            if owner:
                return self._fill(key, fingerprint, compute, running)
            running.wait()

    def _fill(self, key: Any, fingerprint: Any, compute: Callable[[], T], running: threading.Event) -> T:
        try:
            value = compute()
            with self._lock:
                self._items[key] = (fingerprint, value)
                self._items.move_to_end(key)
                while len(self._items) > self._size:
                    self._items.popitem(last=False)
            return value
        finally:
            with self._lock:
                self._running.pop(key, None)
            running.set()
