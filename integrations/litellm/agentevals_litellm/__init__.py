"""agentevals for LiteLLM: score raw ``litellm.completion`` / ``acompletion`` calls live.

>>> from agentevals_litellm import ScoringLogger
"""

from agentevals_litellm._logger import SKIP_KEY, ScoringLogger

__all__ = ["SKIP_KEY", "ScoringLogger"]
