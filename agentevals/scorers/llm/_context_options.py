"""Options shared by the context scorers (precision, relevance, recall)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agentevals._run import Run
from agentevals._steps import Invoker
from agentevals.scorers.llm._common import (
    NO_CONTEXT_HINT,
    check_scale,
    context_extractor,
    resolve_context,
    static_context,
)


@dataclass(frozen=True, kw_only=True)
class ContextOptions:
    """``context`` (static documents), ``context_extractor(run)`` (wins), ``scale``.

    With neither, the run's own context is used: ``run.context``, else its tool results.
    """

    context: Sequence[str] | None = None
    context_extractor: Callable[..., Any] | None = None
    scale: float = 1.0

    def __post_init__(self) -> None:
        owner = type(self).__name__
        object.__setattr__(self, "context", static_context(owner, self.context))
        if self.context_extractor is not None and not callable(self.context_extractor):
            raise ValueError(f"{owner}: context_extractor must be callable, e.g. lambda run: [...]")
        check_scale(owner, self.scale)

    def extractor(self) -> Invoker | None:
        return context_extractor(self.context_extractor, "context_extractor")


async def required_context(run: Run, opts: ContextOptions, extractor: Invoker | None, name: str) -> list[str]:
    """The run's context, or ``ValueError`` saying where context can come from."""
    found = [c for c in await resolve_context(run, extractor=extractor, static=opts.context) if c.strip()]
    if not found:
        raise ValueError(f"No context available for {name} evaluation: {NO_CONTEXT_HINT}")
    return found
