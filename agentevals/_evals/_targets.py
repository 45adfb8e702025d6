"""Call an eval target (an agent, chain, graph or plain function) on one item and capture what it did.

Plain callables (sync or async) get the raw input, plus ``request_context=`` when they accept it.
Framework objects (LangChain Runnables, agents, LangGraph graphs) are called by a *target adapter*
that an integration declares under the entry-point group ``agentevals.targets``: a function
``(target) -> TargetCall | None`` that returns how to call ``target``, or ``None`` when it is not its
kind. ``agentevals-langchain`` declares one. Adapters are loaded (importing their framework) only for a
target that is not a plain function.

A multi-turn item (``EvalItem.turns``) is driven here, the same way for every kind of target: one call
per user turn, whose input is the conversation so far as a list of messages (earlier user turns and
the target's replies, then the new user turn). An adapter gets it as an ordinary item whose ``input``
is that list, so adapters need nothing for multi-turn items.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import inspect
import itertools
import json
from collections.abc import Awaitable, Callable, Mapping
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
    turns_completed: int | None = None  # multi-turn items: the turns the target answered


def target_name(target: Any) -> str:
    """A readable name for the target (used as the ``entity`` of score records)."""
    get_name = getattr(target, "get_name", None)
    if callable(get_name):
        try:
            return str(get_name())
        except Exception:  # a broken get_name must not break the run
            pass
    return str(getattr(target, "name", None) or getattr(target, "__name__", None) or type(target).__name__)


TargetCall = Callable[[EvalItem, TargetOutput, UUID | None], Awaitable[None]]
"""Runs a target on one item, filling the ``TargetOutput``; the ``UUID`` is the run id to use."""

TargetAdapter = Callable[[Any], TargetCall | None]
"""Returns how to call a target of the kind it knows, else ``None``."""

TARGET_ADAPTERS = "agentevals.targets"
"""The entry-point group where integrations declare their :data:`TargetAdapter`."""


@functools.cache
def _adapters() -> tuple[TargetAdapter, ...]:
    """The installed target adapters, loaded once (a broken one is skipped with a warning)."""
    from importlib.metadata import entry_points

    adapters: list[TargetAdapter] = []
    for point in entry_points(group=TARGET_ADAPTERS):
        try:
            adapters.append(point.load())
        except Exception as err:  # one broken plugin must not stop evals of plain callables
            import warnings

            warnings.warn(f"agentevals: target adapter {point.value} failed to load: {err}", stacklevel=2)
    return tuple(adapters)


def _adapted(target: Any) -> TargetCall | None:
    if _is_plain_function(target):  # no adapter is loaded for it: loading one imports its framework
        return None
    for adapter in _adapters():
        call = adapter(target)
        if call is not None:
            return call
    return None


def _is_plain_function(target: Any) -> bool:
    """A function, method or ``functools.partial``: called as it is, never by a framework's adapter
    (frameworks hand out objects: a LangChain Runnable, a LangGraph graph)."""
    return inspect.isroutine(target) or isinstance(target, functools.partial)


def check_target(target: Any) -> None:
    """Fail early on something that cannot be a target."""
    if _adapted(target) is not None or (callable(target) and not hasattr(target, "ainvoke")):
        return
    if callable(getattr(target, "ainvoke", None)):
        raise TypeError(
            f"target {type(target).__name__} looks like a LangChain Runnable; evaluating it needs the "
            "LangChain integration: pip install 'agentevals-core[langchain]'"
        )
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
        adapted = _adapted(target)
        if item.turns is not None:
            await _call_turns(target, adapted, item, out, run_id, executor)
        elif adapted is not None:
            await adapted(item, out, run_id)
        else:
            await _call_function(target, item, out, executor)
    except Exception as err:
        out.error = err
    return out


# -- multi-turn items -------------------------------------------------------------------------------


async def _call_turns(
    target: Any,
    adapted: TargetCall | None,
    item: EvalItem,
    out: TargetOutput,
    run_id: UUID | None,
    executor: Executor | None,
) -> None:
    """Call the target once per user turn, carrying the conversation over.

    ``out.messages`` becomes the whole conversation (also when a turn fails: the turns done so far),
    ``out.raw`` the list of each turn's raw result, ``out.steps`` the last execution of each node.
    ``run_id`` is the first turn's root run id.
    """
    assert item.turns is not None
    conversation: list[Any] = []
    raws: list[Any] = []
    out.raw, out.turns_completed = raws, 0
    try:
        for number, turn in enumerate(item.turns):
            conversation.append(_user_message(turn))
            turn_item = dataclasses.replace(item, input=list(conversation), turns=None)
            turn_out = TargetOutput(input=turn_item.input)
            if adapted is not None:
                await adapted(turn_item, turn_out, run_id if number == 0 else None)
            else:
                await _call_function(target, turn_item, turn_out, executor)
            raws.append(turn_out.raw)
            out.steps.update(turn_out.steps)
            conversation = _carried(conversation, turn_out)
            out.turns_completed = number + 1
    finally:
        out.messages = _canonical(conversation)


def _user_message(turn: Any) -> dict[str, Any]:
    if isinstance(turn, str):
        return {"role": "user", "content": turn}
    return {**turn, "role": "user"}


def _carried(conversation: list[Any], turn: TargetOutput) -> list[Any]:
    """The conversation after a turn: the target's whole conversation when it returned one
    (``{"messages": [...]}``: a chat agent's state), else the conversation plus its reply."""
    if turn.messages is not None:
        return list(turn.messages)
    if _is_langchain_message(turn.raw):
        return [*conversation, turn.raw]  # as returned: a LangChain target gets its own messages back
    reply = turn.output
    if isinstance(reply, Mapping) and "role" in reply:
        return [*conversation, dict(reply)]
    if not isinstance(reply, str):
        reply = json.dumps(reply, default=str) if isinstance(reply, Mapping | list) else str(reply)
    return [*conversation, {"role": "assistant", "content": reply}]


def _canonical(conversation: list[Any]) -> list[Any]:
    """The conversation as canonical messages; it may mix message dicts (the user turns) with the
    target's own message objects, so each run of one kind converts on its own. Left as is if it
    cannot convert (building the run then reports it)."""
    from agentevals._model._convert import to_messages
    from agentevals._model._messages import Message

    def kind(message: Any) -> str:
        return "canonical" if isinstance(message, Message) else "dict" if isinstance(message, Mapping) else ""

    try:
        return [m for _, group in itertools.groupby(conversation, key=kind) for m in to_messages(list(group))]
    except Exception:
        return conversation


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
        from agentevals._model._convert import messages_from_langchain

        out.output = messages_from_langchain([result])
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
