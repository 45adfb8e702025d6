"""agentevals: evaluation inside running LLM agents.

>>> from agentevals import create_scorer
>>> scorer = create_scorer(id="non-empty").generate_score(lambda run, **_: float(bool(run.output_text)))
>>> scorer.run_sync(input="hi", output="hello").score
1.0
"""

from agentevals import (
    _conflicts,  # noqa: F401  (first: a clear ImportError if another project shares this package)
    _renamed,
)
from agentevals._engine import FlushReport, ScoringEngine
from agentevals._engine._decorator import scored
from agentevals._engine._sampling import Sampling
from agentevals._model._errors import AgentEvalsError, JudgeError, ScorerError
from agentevals._model._messages import AgentInput, Message, ToolInvocation
from agentevals._model._result import ScoreRecord, ScoreResult
from agentevals._model._run import Run
from agentevals._scoring._judge._judge import Judge
from agentevals._scoring._scorer import Scorer, create_scorer
from agentevals._scoring._steps import PromptStep
from agentevals.evals import EvalResult, arun_evals, run_evals

__all__ = [
    "AgentEvalsError",
    "AgentInput",
    "EvalResult",
    "FlushReport",
    "Judge",
    "JudgeError",
    "Message",
    "PromptStep",
    "Run",
    "Sampling",
    "ScoreRecord",
    "ScoreResult",
    "Scorer",
    "ScorerError",
    "ScoringEngine",
    "ToolInvocation",
    "arun_evals",
    "create_scorer",
    "run_evals",
    "scored",
]

__getattr__ = _renamed.module_getattr(__name__)
