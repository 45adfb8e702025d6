"""The parts of a scorer's pipeline: prompt steps, earlier steps' results, and what a step may ask."""

from agentevals._model._errors import SkipRun
from agentevals._scoring._scorer import StepInfo, is_scoring
from agentevals._scoring._steps import PromptStep, SkipJudge, StepResults

__all__ = ["PromptStep", "SkipJudge", "SkipRun", "StepInfo", "StepResults", "is_scoring"]
