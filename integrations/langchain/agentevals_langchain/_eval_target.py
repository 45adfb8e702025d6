"""``run_evals`` targets from LangChain: Runnables, ``create_agent`` agents and LangGraph graphs.

A chat target (its state has a ``messages`` channel: ``create_agent`` agents, chat graphs) is called with
``{"messages": [...]}``, anything else with the raw input. A small callback handler records each
LangGraph node's input and output, so step scorers can score nodes. Declared to agentevals under the
entry-point group ``agentevals.targets``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable

from agentevals.live import (
    EvalItem,
    StepCapture,
    TargetCall,
    TargetOutput,
    as_agent_input,
    messages_from_langchain,
)
from agentevals_langchain._recorder import snapshot


def runnable_target(target: Any) -> TargetCall | None:
    """How to call ``target`` when it is a LangChain Runnable (agents and graphs are), else ``None``."""
    if not isinstance(target, Runnable):
        return None
    return functools.partial(_call_runnable, target)


def _takes_messages(target: Any) -> bool:
    channels = getattr(target, "channels", None)
    if isinstance(channels, Mapping):
        return "messages" in channels
    try:
        schema = target.get_input_jsonschema()
    except Exception:  # schemas of user types can fail to build; then it is not a chat graph
        return False
    return isinstance(schema, Mapping) and "messages" in (schema.get("properties") or {})


def _as_messages(value: Any) -> Any:
    """The ``{"messages": [...]}`` state for a chat agent, from an item input.

    A mapping that is not an ``AgentInput`` (``input_messages``, ...) is the graph's own state: as is.
    """
    if isinstance(value, str):
        return {"messages": [{"role": "user", "content": value}]}
    if isinstance(value, Mapping):
        agent_input = as_agent_input(value)
        if agent_input is None:
            return dict(value)
        ordered = [*agent_input.system_messages, *agent_input.remembered_messages]
        ordered += agent_input.input_messages
        return {"messages": [{"role": m.role, "content": m.content} for m in ordered]}
    if isinstance(value, Sequence):
        return {"messages": [{"role": "user", "content": m} if isinstance(m, str) else m for m in value]}
    raise TypeError(
        f"a chat agent's item input must be a string, a list of messages, or {{'messages': [...]}}; "
        f"got {type(value).__name__}"
    )


async def _call_runnable(target: Any, item: EvalItem, out: TargetOutput, run_id: UUID | None) -> None:
    recorder = _StepRecorder(out.steps)
    config: dict[str, Any] = {"callbacks": [recorder]}
    if run_id is not None:
        config["run_id"] = run_id
    if item.request_context:
        config["configurable"] = dict(item.request_context)
    payload = _as_messages(item.input) if _takes_messages(target) else item.input
    result = await target.ainvoke(payload, config=config)
    out.raw = result
    if isinstance(result, Mapping) and isinstance(result.get("messages"), list):
        out.messages = list(result["messages"])
    elif isinstance(result, BaseMessage):
        out.output = messages_from_langchain([result])
    else:
        out.output = result


class _StepRecorder(AsyncCallbackHandler):
    """Records each top-level LangGraph node's input and output (on the event loop; copies only)."""

    def __init__(self, steps: dict[str, StepCapture]) -> None:
        super().__init__()
        self.steps = steps
        self._root: UUID | None = None
        self._nodes: dict[UUID, StepCapture] = {}

    async def on_chain_start(
        self,
        serialized: Any,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if self._root is None:  # the first chain seen is the target itself
            self._root = run_id
            return
        name = kwargs.get("name")
        if parent_run_id != self._root or not name or (metadata or {}).get("langgraph_node") != name:
            return
        capture = StepCapture(name=str(name), input=snapshot(inputs))
        self._nodes[run_id] = capture
        self.steps[capture.name] = capture

    async def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        capture = self._nodes.pop(run_id, None)
        if capture is not None:
            capture.output, capture.done = _node_update(outputs), True

    async def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        capture = self._nodes.pop(run_id, None)
        if capture is not None:
            capture.error, capture.done = error, True


def _node_update(outputs: Any) -> Any:
    """A node's state update; ``Command(update=...)`` results (create_agent's model node) are unwrapped."""
    items = outputs if isinstance(outputs, list) else [outputs]
    updates = [o.update if type(o).__name__ == "Command" else o for o in items]
    if len(updates) == 1:
        return snapshot(updates[0])
    mappings = [u for u in updates if isinstance(u, Mapping)]
    if len(mappings) == len(updates):
        return {k: v for update in mappings for k, v in update.items()}
    return outputs
