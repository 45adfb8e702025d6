"""agentevals for LangChain and LangGraph: score runs live from a callback handler or agent middleware.

>>> from agentevals_langchain import ScorerCallbackHandler, ScoringMiddleware
"""

try:  # first, so a foreign `agentevals` package fails here with a message that says how to fix it
    import agentevals.live  # noqa: F401  (the seam: raises if another project shares the package)
except ModuleNotFoundError as err:  # `agentevals` is another project's package, without our files
    if err.name != "agentevals.live":
        raise
    raise ImportError(
        "agentevals-langchain needs the agentevals-core distribution, but `import agentevals` finds another "
        "project's package (the unrelated `agentevals` or `agentevals-cli` distribution). Fix: pip "
        "uninstall agentevals agentevals-cli && pip install --force-reinstall agentevals-core"
    ) from err

from agentevals_langchain._handler import ScorerCallbackHandler
from agentevals_langchain._middleware import ScoringMiddleware

__all__ = ["ScorerCallbackHandler", "ScoringMiddleware"]
