"""Target adapters: call an agent, chain, graph or plain function on one item and capture what it did.

A LangChain/LangGraph target (anything with ``ainvoke``) is called with ``{"messages": [...]}`` when its
state has a ``messages`` channel (``create_agent`` agents, chat graphs), else with the raw input. A small
callback handler records each LangGraph node's input and output, so step scorers can score nodes.
Plain callables (sync or async) get the raw input, plus ``request_context=`` when they accept it.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from agentevals._evals._data import EvalItem

_STEP_KEYS = ("step_results", "stepResults", "steps")


@dataclass
class StepCapture:
    """One node's (or step's) input and output; the last execution wins when a node runs repeatedly."""

    name: str
    input: Any = None
    output: Any = None
    error: BaseException | None = None
    done: bool = False

    @property
    def ok(self) -> bool:
        return self.done and self.error is None


@dataclass
class TargetOutput:
    """What one target call produced: the raw result, the conversation (if any), steps, or an error."""

    raw: Any = None
    input: Any = None
    output: Any = None
    messages: list[Any] | None = None
    steps: dict[str, StepCapture] = field(default_factory=dict)
    error: BaseException | None = None


def target_name(target: Any) -> str:
    """A readable name for the target (used as the ``entity`` of score records)."""
    get_name = getattr(target, "get_name", None)
    if callable(get_name):
        try:
            return str(get_name())
        except Exception:  # a broken get_name must not break the run
            pass
    return str(getattr(target, "name", None) or getattr(target, "__name__", None) or type(target).__name__)


def check_target(target: Any) -> None:
    """Fail early on something that cannot be a target."""
    if not (callable(getattr(target, "ainvoke", None)) or callable(target)):
        raise TypeError(
            f"target must be a LangChain Runnable/agent, a LangGraph graph, or a (sync or async) "
            f"callable taking the item's input; got {type(target).__name__}"
        )


async def call_target(
    target: Any, item: EvalItem, *, run_id: UUID | None = None, executor: Executor | None = None
) -> TargetOutput:
    """Run ``target`` on ``item``; an exception becomes ``TargetOutput.error`` instead of propagating.

    ``run_id`` becomes the LangChain root run id, so score records join the target's trace; a sync
    callable runs on ``executor`` (size it to the wanted concurrency), else on the loop's default one.
    """
    out = TargetOutput(input=item.input)
    try:
        if callable(getattr(target, "ainvoke", None)):
            await _call_runnable(target, item, out, run_id)
        else:
            await _call_function(target, item, out, executor)
    except Exception as err:
        out.error = err
    return out


# -- LangChain / LangGraph ------------------------------------------------------------------------


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
        from agentevals._messages import AgentInput
        from agentevals._run import _looks_like_agent_input

        if not _looks_like_agent_input(value):
            return dict(value)
        agent_input = AgentInput.model_validate(value)
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
    recorder = _recorder_class()(out.steps)
    config: dict[str, Any] = {"callbacks": [recorder]}
    if run_id is not None:
        config["run_id"] = run_id
    if item.request_context:
        config["configurable"] = dict(item.request_context)
    payload = _as_messages(item.input) if _takes_messages(target) else item.input
    result = await target.ainvoke(payload, config=config)
    out.raw = result
    _set_output(out, result)


def _set_output(out: TargetOutput, result: Any) -> None:
    from langchain_core.messages import BaseMessage

    if isinstance(result, Mapping) and isinstance(result.get("messages"), list):
        out.messages = list(result["messages"])
    elif isinstance(result, BaseMessage):
        from agentevals._convert import messages_from_langchain

        out.output = messages_from_langchain([result])
    else:
        out.output = result


@functools.cache
def _recorder_class() -> type[Any]:
    """The callback handler class, built on first use so importing agentevals stays light."""
    from langchain_core.callbacks import AsyncCallbackHandler

    class StepRecorder(AsyncCallbackHandler):
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
            capture = StepCapture(name=str(name), input=_snapshot(inputs))
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

    return StepRecorder


def _snapshot(value: Any) -> Any:
    """A shallow copy, so later state changes do not rewrite what the node received."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, list):
        return list(value)
    return value


def _node_update(outputs: Any) -> Any:
    """A node's state update; ``Command(update=...)`` results (create_agent's model node) are unwrapped."""
    items = outputs if isinstance(outputs, list) else [outputs]
    updates = [o.update if type(o).__name__ == "Command" else o for o in items]
    if len(updates) == 1:
        return _snapshot(updates[0])
    mappings = [u for u in updates if isinstance(u, Mapping)]
    if len(mappings) == len(updates):
        return {k: v for update in mappings for k, v in update.items()}
    return outputs


# -- plain callables --------------------------------------------------------------------------------


def _accepts_request_context(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "request_context" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def _is_async(fn: Any) -> bool:
    call = type(fn).__call__ if not inspect.isroutine(fn) else None
    return inspect.iscoroutinefunction(fn) or (call is not None and inspect.iscoroutinefunction(call))


async def _call_function(
    fn: Callable[..., Any], item: EvalItem, out: TargetOutput, executor: Executor | None
) -> None:
    kwargs = {"request_context": item.request_context} if _accepts_request_context(fn) else {}
    if _is_async(fn):
        result = await fn(item.input, **kwargs)
    else:
        # Sync targets run in worker threads so that items really overlap.
        call = functools.partial(contextvars.copy_context().run, fn, item.input, **kwargs)
        result = await asyncio.get_running_loop().run_in_executor(executor, call)
        if inspect.isawaitable(result):
            result = await result
    out.raw = result
    _set_function_output(out, result)


def _set_function_output(out: TargetOutput, result: Any) -> None:
    if isinstance(result, Mapping) and "output" in result and any(k in result for k in _STEP_KEYS):
        out.output = result["output"]
        steps = next(result[k] for k in _STEP_KEYS if k in result) or {}
        for name, raw in steps.items():
            out.steps[str(name)] = _step_of(str(name), raw)
        return
    if isinstance(result, Mapping) and isinstance(result.get("messages"), list):
        out.messages = list(result["messages"])
        return
    if _is_langchain_message(result):
        _set_output(out, result)
        return
    out.output = result


def _is_langchain_message(value: Any) -> bool:
    return type(value).__module__.startswith("langchain_core.messages")


def _step_of(name: str, raw: Any) -> StepCapture:
    """A step from a callable's ``step_results``: ``{"input"/"payload", "output", "status"}``."""
    if not isinstance(raw, Mapping):
        return StepCapture(name=name, output=raw, done=True)
    status = raw.get("status", "success")
    error = None
    if status != "success":
        error = RuntimeError(str(raw.get("error") or f"step {name!r} ended with status {status!r}"))
    step_input = raw.get("input", raw.get("payload"))
    return StepCapture(name=name, input=step_input, output=raw.get("output"), error=error, done=True)
