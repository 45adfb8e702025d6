"""A progress bar on stderr (rich), shown only when asked for and stderr is a terminal."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any


class ProgressBar:
    """``with ProgressBar(total, enabled=...) as bar: bar.advance(failed=...)``; a no-op when disabled."""

    def __init__(self, total: int, *, enabled: bool, description: str = "evaluating") -> None:
        self.enabled = enabled and _stderr_is_tty()
        self.total = total
        self.description = description
        self._progress: Any = None
        self._task: Any = None
        self.failed = 0

    def __enter__(self) -> ProgressBar:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[failed]} failed"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task(self.description, total=self.total, failed=0)
        return self

    def advance(self, *, failed: bool = False) -> None:
        self.failed += int(failed)
        if self._progress is not None:
            self._progress.update(self._task, advance=1, failed=self.failed)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False
