"""agentevals: evaluation inside running LLM agents.

>>> from agentevals import create_scorer
>>> scorer = create_scorer(id="non-empty").generate_score(lambda run, **_: float(bool(run.output_text)))
>>> scorer.run_sync(input="hi", output="hello").score
1.0
"""

from agentevals._convert import messages_from_langchain, messages_from_openai
from agentevals._decorator import scored
from agentevals._engine import EngineStats, ScorerEntry, ScoringEngine
from agentevals._errors import AgentEvalsError, JudgeError, JudgeOutputError, RunBuildError, ScorerError
from agentevals._evals import (
    EvalItem,
    EvalResult,
    EvalSummary,
    ItemResult,
    ScorerStats,
    arun_evals,
    run_evals,
)
from agentevals._judge._judge import Judge
from agentevals._messages import AgentInput, Message, ToolInvocation
from agentevals._result import JudgeCall, ScoreFailure, ScoreRecord, ScoreResult
from agentevals._run import Run
from agentevals._sampling import Sampling
from agentevals._scorer import Scorer, StepInfo, create_scorer, is_scoring
from agentevals._steps import PromptStep, SkipJudge, StepResults

__all__ = [
    "AgentEvalsError",
    "AgentInput",
    "EngineStats",
    "EvalItem",
    "EvalResult",
    "EvalSummary",
    "ItemResult",
    "Judge",
    "JudgeCall",
    "JudgeError",
    "JudgeOutputError",
    "Message",
    "PromptStep",
    "Run",
    "RunBuildError",
    "Sampling",
    "ScoreFailure",
    "ScoreRecord",
    "ScoreResult",
    "Scorer",
    "ScorerEntry",
    "ScorerError",
    "ScorerStats",
    "ScoringEngine",
    "SkipJudge",
    "StepInfo",
    "StepResults",
    "ToolInvocation",
    "arun_evals",
    "create_scorer",
    "is_scoring",
    "messages_from_langchain",
    "messages_from_openai",
    "run_evals",
    "scored",
]
