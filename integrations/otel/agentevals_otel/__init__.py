"""agentevals for OpenTelemetry: score the agent runs that any framework traces, live.

>>> from agentevals_otel import ScoringSpanProcessor
"""

try:  # first, so a foreign `agentevals` package fails here with a message that says how to fix it
    import agentevals.live  # noqa: F401  (the seam: raises if another project shares the package)
except ModuleNotFoundError as err:  # `agentevals` is another project's package, without our files
    if err.name != "agentevals.live":
        raise
    raise ImportError(
        "agentevals-otel needs the agentevals-core distribution, but `import agentevals` finds another "
        "project's package (the unrelated `agentevals` or `agentevals-cli` distribution). Fix: pip "
        "uninstall agentevals agentevals-cli && pip install --force-reinstall agentevals-core"
    ) from err

from agentevals_otel._build import GROUND_TRUTH, METADATA_PREFIX
from agentevals_otel._processor import ScoringSpanProcessor

__all__ = ["GROUND_TRUTH", "METADATA_PREFIX", "ScoringSpanProcessor"]
