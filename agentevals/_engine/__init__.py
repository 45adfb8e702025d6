"""Live scoring: the background engine, its scorer entries, stats and flush reports."""

from agentevals._engine._config import ScorerEntry
from agentevals._engine._engine import ScoringEngine
from agentevals._engine._stats import EngineStats, FlushReport

__all__ = ["EngineStats", "FlushReport", "ScorerEntry", "ScoringEngine"]
