"""Live scoring: the background engine, its options, its scorer entries, sampling and stats.

>>> from agentevals.engine import ScoringEngine, ScorerEntry, QueueOptions
"""

from agentevals._engine import EngineStats, FlushReport, ScorerEntry, ScoringEngine
from agentevals._engine._forward._options import BrokerOptions
from agentevals._engine._options import DeliveryOptions, ExitOptions, QueueOptions, ScoringOptions
from agentevals._engine._sampling import Sampling
from agentevals._engine._sampling_rules import Rule
from agentevals._scoring._limits._breaker import Breaker, BreakerStatus
from agentevals._scoring._limits._budget import Budget, BudgetUsage

__all__ = [
    "Breaker",
    "BreakerStatus",
    "BrokerOptions",
    "Budget",
    "BudgetUsage",
    "DeliveryOptions",
    "EngineStats",
    "ExitOptions",
    "FlushReport",
    "QueueOptions",
    "Rule",
    "Sampling",
    "ScorerEntry",
    "ScoringEngine",
    "ScoringOptions",
]
