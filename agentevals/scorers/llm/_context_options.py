"""Options shared by the context scorers (precision, relevance, recall)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from agentevals._model._errors import SkipRun
from agentevals._model._run import Run
from agentevals._scoring._steps import Invoker
from agentevals.scorers.llm._common import (
    NO_CONTEXT_HINT,
    check_scale,
    resolve_context,
    run_hook,
    static_context,
)


@dataclass(frozen=True, kw_only=True)
class ContextOptions:
    """``context`` (static documents), ``get_context(run)`` (computed per run; wins), ``scale``.

    With neither, the run's own context is used: ``run.context``, else its tool results.
    """

    context: Sequence[str] | None = None
    get_context: Callable[..., Any] | None = None
    scale: float = 1.0

    def __post_init__(self) -> None:
        owner = type(self).__name__
        object.__setattr__(self, "context", static_context(owner, self.context))
        if self.get_context is not None and not callable(self.get_context):
            raise ValueError(f"{owner}: get_context must be callable, e.g. lambda run: [...]")
        check_scale(owner, self.scale)

    def extractor(self) -> Invoker | None:
        return run_hook(self.get_context, "get_context")


async def required_context(run: Run, opts: ContextOptions, extractor: Invoker | None, name: str) -> list[str]:
    """The run's context, or ``ValueError`` saying where context can come from."""
    found = [c for c in await resolve_context(run, extractor=extractor, static=opts.context) if c.strip()]
    if not found:
        raise SkipRun(f"No context available for {name} evaluation: {NO_CONTEXT_HINT}", reason="no_context")
    return found
