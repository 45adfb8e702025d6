"""agentevals for LangChain and LangGraph: score runs live from a callback handler or agent middleware.

>>> from agentevals_langchain import ScorerCallbackHandler, ScoringMiddleware
"""

from agentevals_langchain._handler import ScorerCallbackHandler
from agentevals_langchain._middleware import ScoringMiddleware

__all__ = ["ScorerCallbackHandler", "ScoringMiddleware"]
