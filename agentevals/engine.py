"""Live scoring: the background engine, its scorer entries, sampling and stats.

>>> from agentevals.engine import ScoringEngine, ScorerEntry
"""

from agentevals._engine import EngineStats, FlushReport, ScorerEntry, ScoringEngine
from agentevals._sampling import Sampling

__all__ = ["EngineStats", "FlushReport", "Sampling", "ScorerEntry", "ScoringEngine"]
