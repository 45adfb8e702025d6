"""What scoring produces: a scorer's result, the stored record, an error record and a judge call."""

from agentevals._model._result import JudgeCall, ScoreFailure, ScoreRecord, ScoreResult, ScoreSkipped

__all__ = ["JudgeCall", "ScoreFailure", "ScoreRecord", "ScoreResult", "ScoreSkipped"]
