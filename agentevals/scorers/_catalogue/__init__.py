"""The prebuilt scorers by id (``SCORERS``), in a folder of its own above the scorer folders it lists."""

from agentevals.scorers._catalogue._table import SCORERS, scorer_id

__all__ = ["SCORERS", "scorer_id"]
