"""Live scoring: the background engine, its scorer entries and stats."""

from agentevals._engine._config import ScorerEntry
from agentevals._engine._engine import ScoringEngine
from agentevals._engine._stats import EngineStats

__all__ = ["EngineStats", "ScorerEntry", "ScoringEngine"]
