"""A run known by its ids now and built later, only if a scorer samples it: the agent's thread records
references, the engine's thread (or the forwarder's) builds the run."""

from __future__ import annotations

from collections.abc import Callable

from agentevals._model._run import Run


class DeferredRun:
    """A run known by its ids now and built by ``build()`` later, only if a scorer samples it."""

    __slots__ = ("build", "run_id", "trace_id")

    def __init__(self, build: Callable[[], Run], run_id: str, trace_id: str | None) -> None:
        self.build = build
        self.run_id = run_id
        self.trace_id = trace_id

    def materialize(self) -> Run:
        """The built run; a ``TypeError`` when ``build`` returned something else."""
        run = self.build()
        if not isinstance(run, Run):
            raise TypeError(f"the run builder returned {type(run).__name__}, not an agentevals.Run")
        return run

    def failing(self, error: Exception) -> DeferredRun:
        """This run with a build that raises ``error`` again: its build already failed once."""

        def raise_again() -> Run:
            raise error

        return DeferredRun(raise_again, self.run_id, self.trace_id)

    def placeholder(self) -> Run:
        """A run with only the ids, for the error records of a run that could not be built."""
        return Run(run_id=self.run_id, trace_id=self.trace_id)
