"""The parts of a scorer's pipeline: prompt steps, earlier steps' results, and what a step may ask."""

from agentevals._scorer import StepInfo, is_scoring
from agentevals._steps import PromptStep, SkipJudge, SkipRun, StepResults

__all__ = ["PromptStep", "SkipJudge", "SkipRun", "StepInfo", "StepResults", "is_scoring"]
