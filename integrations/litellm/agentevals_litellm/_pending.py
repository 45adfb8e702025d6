"""Completed LiteLLM calls whose success callback has not come yet.

LiteLLM reports a finished call later, apart from the call: a sync call from a thread of its own, an
async call from a task on the caller's event loop. ``asyncio.run`` cancels that task when the loop closes
first, so the callback may never come (or come much later, on another loop). Each call is noted here
while it ends (inside the call), so that ``flush()`` knows which callbacks to wait for, and an async
call keeps its response, to be scored from here when its callback cannot come.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

#: Seconds a completed call's callback may take before the call is scored from here (or, with no
#: response kept, counted as lost). LiteLLM's callbacks normally come within milliseconds.
PATIENCE = 5.0
_REMEMBERED = 10_000  # calls scored from here whose late callback is still to be ignored


@dataclass
class Pending:
    """One completed call: LiteLLM's details of it (the mapping its callbacks get), when it was noted,
    and for an async call its event loop, response and end time."""

    details: Mapping[str, Any]
    noted: float
    loop: asyncio.AbstractEventLoop | None = None
    response: Any = None
    ended: datetime | None = None

    def rescuable(self, now: float, blocked: asyncio.AbstractEventLoop | None) -> bool:
        """Whether to score it from here: its callback cannot come now (its loop is closed, stopped or
        blocked by the caller) or is overdue."""
        if self.response is None or self.loop is None:
            return False
        idle = self.loop is blocked or not self.loop.is_running()
        return idle or now - self.noted >= PATIENCE


@dataclass(frozen=True)
class Due:
    """What :meth:`PendingCalls.take` found: calls to score from here, calls given up, calls still
    awaited."""

    rescue: list[Pending]
    lost: list[Pending]
    waiting: int


class PendingCalls:
    """The calls noted and not yet settled, by LiteLLM call id (thread-safe: callbacks come from
    LiteLLM's threads and from any event loop)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[str, Pending] = {}
        self._rescued: OrderedDict[str, None] = OrderedDict()
        self._lost: OrderedDict[str, None] = OrderedDict()

    def note(self, call_id: str, details: Mapping[str, Any], now: float) -> None:
        """A call got its reply (its callback is now due)."""
        with self._lock:
            self._calls.setdefault(call_id, Pending(details, now))

    def answered(
        self,
        call_id: str,
        details: Mapping[str, Any],
        response: Any,
        loop: asyncio.AbstractEventLoop,
        now: float,
    ) -> None:
        """An async call returns ``response`` on ``loop``: kept, to be scored from here if need be."""
        ended = datetime.now()  # naive local time, as LiteLLM gives its callbacks
        with self._lock:
            pending = self._calls.setdefault(call_id, Pending(details, now))
            pending.loop, pending.response, pending.ended = loop, response, ended

    def settle(self, call_id: str) -> tuple[bool, bool]:
        """The call's callback came: ``(capture, was_lost)``. ``capture`` is ``False`` when the call was
        already scored from here; ``was_lost`` when it had been given up on."""
        with self._lock:
            self._calls.pop(call_id, None)
            if call_id in self._rescued:
                del self._rescued[call_id]
                return False, False
            if call_id in self._lost:
                del self._lost[call_id]
                return True, True
        return True, False

    def take(self, now: float, blocked: asyncio.AbstractEventLoop | None = None) -> Due:
        """Remove and return the calls to score from here and those given up (overdue with no
        response); ``blocked`` is a loop the caller is blocking, whose callbacks cannot come meanwhile."""
        rescue: list[Pending] = []
        lost: list[Pending] = []
        with self._lock:
            for call_id, pending in list(self._calls.items()):
                if pending.rescuable(now, blocked):
                    rescue.append(self._calls.pop(call_id))
                    _remember(self._rescued, call_id)
                elif pending.response is None and now - pending.noted >= PATIENCE:
                    lost.append(self._calls.pop(call_id))
                    _remember(self._lost, call_id)
            return Due(rescue, lost, len(self._calls))

    def __len__(self) -> int:
        with self._lock:
            return len(self._calls)


def _remember(ids: OrderedDict[str, None], call_id: str) -> None:
    ids[call_id] = None
    if len(ids) > _REMEMBERED:
        ids.popitem(last=False)
