"""Live scoring: the background engine, its scorer entries, sampling and stats.

>>> from agentevals.engine import ScoringEngine, ScorerEntry
"""

from agentevals._engine import EngineStats, FlushReport, ScorerEntry, ScoringEngine
from agentevals._sampling import Sampling
from agentevals._sampling_rules import Rule

__all__ = ["EngineStats", "FlushReport", "Rule", "Sampling", "ScorerEntry", "ScoringEngine"]
