"""agentevals: evaluation inside running LLM agents.

>>> from agentevals import create_scorer
>>> scorer = create_scorer(id="non-empty").generate_score(lambda run, **_: float(bool(run.output_text)))
>>> scorer.run_sync(input="hi", output="hello").score
1.0
"""

from agentevals import installation  # noqa: F401  (first: a clear ImportError if another project shares this package)
from agentevals._decorator import scored
from agentevals._deprecation import deprecated_names
from agentevals._engine import ScoringEngine
from agentevals._errors import AgentEvalsError, JudgeError, ScorerError
from agentevals._judge._judge import Judge
from agentevals._messages import AgentInput, Message, ToolInvocation
from agentevals._result import ScoreRecord, ScoreResult
from agentevals._run import Run
from agentevals._sampling import Sampling
from agentevals._scorer import Scorer, create_scorer
from agentevals._steps import PromptStep
from agentevals.evals import EvalResult, arun_evals, run_evals

__all__ = [
    "AgentEvalsError",
    "AgentInput",
    "EvalResult",
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

# Names that moved to submodules; the old spellings still work and warn once.
__getattr__ = deprecated_names(
    "agentevals",
    {
        "EngineStats": "agentevals.engine:EngineStats",
        "ScorerEntry": "agentevals.engine:ScorerEntry",
        "EvalItem": "agentevals.evals:EvalItem",
        "EvalSummary": "agentevals.evals:EvalSummary",
        "ItemResult": "agentevals.evals:ItemResult",
        "ScorerStats": "agentevals.evals:ScorerStats",
        "JudgeOutputError": "agentevals.errors:JudgeOutputError",
        "RunBuildError": "agentevals.errors:RunBuildError",
        "JudgeCall": "agentevals.results:JudgeCall",
        "ScoreFailure": "agentevals.results:ScoreFailure",
        "SkipJudge": "agentevals.steps:SkipJudge",
        "StepInfo": "agentevals.steps:StepInfo",
        "StepResults": "agentevals.steps:StepResults",
        "is_scoring": "agentevals.steps:is_scoring",
        "messages_from_langchain": "agentevals.messages:messages_from_langchain",
        "messages_from_openai": "agentevals.messages:messages_from_openai",
    },
)
