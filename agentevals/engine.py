"""Live scoring: the background engine, its scorer entries, sampling and stats.

>>> from agentevals.engine import ScoringEngine, ScorerEntry
"""

from agentevals._engine import EngineStats, FlushReport, ScorerEntry, ScoringEngine
from agentevals._engine._sampling import Sampling
from agentevals._engine._sampling_rules import Rule
from agentevals._scoring._limits._breaker import Breaker, BreakerStatus
from agentevals._scoring._limits._budget import Budget, BudgetUsage

__all__ = [
    "Breaker",
    "BreakerStatus",
    "Budget",
    "BudgetUsage",
    "EngineStats",
    "FlushReport",
    "Rule",
    "Sampling",
    "ScorerEntry",
    "ScoringEngine",
]
