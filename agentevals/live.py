"""The public seam for integrations: everything an adapter to an agent framework may use.

An integration captures what its framework did, turns it into a :class:`~agentevals.Run` and hands it
to an :class:`Engine` through :class:`LiveScoring`, the base that owns the engine wiring (``engine=``
or ``scorers=``/``sinks=``/``sampling=``), ``flush`` / ``aflush`` / ``shutdown``, and submits that never
raise into the agent. LangChain messages convert with :func:`messages_from_langchain`, or in two steps
(:func:`langchain_parts` on the agent's thread, :func:`messages_from_parts` later) so that a run waiting
to be scored holds plain values only. ``run_evals`` calls framework objects through target adapters
declared under the entry-point group :data:`TARGET_ADAPTERS`. :func:`import_litellm` imports LiteLLM
configured as agentevals' judges use it (the bundled price list: no network fetch at import).

Integrations import only from here and from the other public modules (``agentevals``,
``agentevals.scorers``, ``agentevals.sinks``, ``agentevals.testing``).
"""

from agentevals import _conflicts  # noqa: F401  (first: an integration imports this module first)
from agentevals._engine._live import Engine, LiveScoring, as_agent_input, current_trace_context
from agentevals._evals._data import EvalItem
from agentevals._evals._targets import TARGET_ADAPTERS, StepCapture, TargetAdapter, TargetCall, TargetOutput
from agentevals._model._convert import (
    LangChainParts,
    langchain_parts,
    messages_from_langchain,
    messages_from_openai,
    messages_from_parts,
    parse_json_text,
)
from agentevals._scoring._judge._litellm import litellm as import_litellm
from agentevals._scoring._scorer import is_scoring

__all__ = [
    "TARGET_ADAPTERS",
    "Engine",
    "EvalItem",
    "LangChainParts",
    "LiveScoring",
    "StepCapture",
    "TargetAdapter",
    "TargetCall",
    "TargetOutput",
    "as_agent_input",
    "current_trace_context",
    "import_litellm",
    "is_scoring",
    "langchain_parts",
    "messages_from_langchain",
    "messages_from_openai",
    "messages_from_parts",
    "parse_json_text",
]
