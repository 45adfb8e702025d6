"""Every exception agentevals raises (the hierarchy is drawn in :mod:`agentevals._model._errors`)."""

from agentevals._model._errors import (
    AgentEvalsError,
    JudgeError,
    JudgeOutputError,
    RunBuildError,
    ScorerError,
    ScorerSkipped,
)

__all__ = [
    "AgentEvalsError",
    "JudgeError",
    "JudgeOutputError",
    "RunBuildError",
    "ScorerError",
    "ScorerSkipped",
]
