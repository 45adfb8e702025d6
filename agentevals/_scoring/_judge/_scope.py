"""The seam between the judge and the engine's limits: a context variable holding the limits of the
engine whose scorer is running (unset elsewhere: ``run_evals``, ``rescore`` and direct calls are not
limited). Kept free of imports so the judge can read it without an import cycle."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from typing import Protocol


class Ticket(Protocol):
    """One admitted judge call: its usage is reported per attempt, then the call is closed."""

    def sending(self) -> AbstractAsyncContextManager[None]:
        """Held around each attempt's request, inside the judge's own ``max_concurrency``: a worker's
        judge caps take their slots here, so waiting requests and retry backoffs hold none."""

    def add(self, tokens: int, cost: float | None) -> None:
        """One attempt's reported usage (prompt + completion tokens, LiteLLM cost in USD or ``None``)."""

    def close(self, error: BaseException | None) -> None:
        """The call ended: ``None`` on success, else what it raised."""


class Limits(Protocol):
    """What the judge asks before each call (raises ``SkipRun`` when the call may not happen)."""

    async def admit(self, model: str, api_base: str | None) -> Ticket: ...


active_limits: ContextVar[Limits | None] = ContextVar("agentevals_judge_limits", default=None)
