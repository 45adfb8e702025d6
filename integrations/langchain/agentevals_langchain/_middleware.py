"""``ScoringMiddleware``: scorers straight in the ``create_agent`` constructor (LangChain 1.x)."""

from __future__ import annotations

import atexit
import itertools
import logging
import sys
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import PrivateStateAttr

from agentevals import FlushReport, Scorer
from agentevals.live import Engine, LiveScoring
from agentevals_langchain._handler import ScorerCallbackHandler
from agentevals_langchain._recorder import TRACE_KEY, Trace, run_metadata

log = logging.getLogger("agentevals.langchain")

_STATE_KEY = "agentevals_run"
_NOT_CAPTURED = ""  # the capture id of a run this middleware leaves to a callback handler
_instances = itertools.count(1)


def _merge(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    return {**(left or {}), **(right or {})}


class ScoringState(AgentState[Any]):
    """The agent state plus one private field: each scoring middleware's capture id for this run."""

    agentevals_run: NotRequired[Annotated[dict[str, Any], PrivateStateAttr, _merge]]


class ScoringMiddleware(LiveScoring, AgentMiddleware[ScoringState, Any, Any]):
    """Score a ``create_agent`` agent's runs: ``create_agent(..., middleware=[ScoringMiddleware(...)])``.

    After each run it copies the final messages (plus the system prompt, tool timings and errors and
    token usage it saw while wrapping model and tool calls), builds one ``Run`` and submits it to the
    engine; scoring runs in the background. Both sync and async hooks are implemented, so ``invoke``,
    ``ainvoke`` and streaming all work; no hook ever raises into the agent.

    A run whose model or tool call raises (and so never reaches ``after_agent``) is recorded too: a
    ``Run`` with ``error`` set, the messages up to the failure and the duration until it, submitted
    ``failure_grace`` seconds after the failure unless the agent recovered by then (a retry or fallback
    middleware listed before this one), or sooner at :meth:`flush`, :meth:`shutdown` or exit. Scorers
    with ``score_errors=True`` score it (``score_errors=`` here is the default of every scorer entry);
    the others write a skipped record (``run_failed``).

    Any other keyword is a ``ScoringEngine`` option (``broker=``, ``queue=``, ``budgets=``, ``breaker=``,
    ``redact=``...) for the engine it builds; or pass a ready ``engine=`` instead of ``scorers=`` and all
    of them. A :class:`ScorerCallbackHandler` on the same run with the *same* engine captures the run
    alone (so it is scored once); with an engine of its own, each engine scores the run.

    >>> from agentevals.scorers import create_includes_scorer
    >>> agent = create_agent(model, tools=[...], middleware=[               # doctest: +SKIP
    ...     ScoringMiddleware(scorers={"mentions_paris": create_includes_scorer()}, sinks=[SQLiteSink()])])
    """

    state_schema = ScoringState

    def __init__(
        self,
        *,
        scorers: Mapping[str, Any] | Sequence[Scorer] | None = None,
        sinks: Sequence[Any] | None = None,
        engine: Engine | None = None,
        sampling: float | Mapping[str, Any] | None = None,
        entity: str | None = None,
        name: str | None = None,
        max_open_runs: int = 10_000,
        score_errors: bool | None = None,
        failure_grace: float = 5.0,
        **engine_options: Any,
    ) -> None:
        if max_open_runs < 1:
            raise ValueError(f"max_open_runs must be >= 1, got {max_open_runs!r}")
        if failure_grace < 0:
            raise ValueError(f"failure_grace is in seconds and must be >= 0, got {failure_grace!r}")
        LiveScoring.__init__(
            self,
            scorers=scorers,
            sinks=sinks,
            engine=engine,
            sampling=sampling,
            score_errors=score_errors,
            **engine_options,
        )
        self.entity = entity
        number = next(_instances)
        # create_agent requires distinct middleware names; several scoring middlewares may coexist.
        self._name = name or ("ScoringMiddleware" if number == 1 else f"ScoringMiddleware_{number}")
        self.max_open_runs = max_open_runs
        self._lock = threading.Lock()
        self._open: OrderedDict[str, Trace] = OrderedDict()
        self._warned_double = False
        self.failure_grace = failure_grace
        # Runs whose model or tool call raised: root id -> (perf_counter at the failure, error, messages).
        self._failing: dict[str, tuple[float, BaseException, list[Any]]] = {}
        self._timer: threading.Timer | None = None  # submits the failed runs whose grace is over
        atexit.register(self._safely, self._finish_failed)

    @property
    def open_runs(self) -> int:
        """Runs started and not yet finished (their captured data is still in memory)."""
        with self._lock:
            return len(self._open)

    @property
    def name(self) -> str:
        return self._name

    # -- node hooks ---------------------------------------------------------------------------------

    def before_agent(self, state: ScoringState, runtime: Any) -> dict[str, Any] | None:
        try:
            return self._begin(state, runtime)
        except Exception:
            log.exception("agentevals: ScoringMiddleware.before_agent failed; this run is not scored")
            return None

    async def abefore_agent(self, state: ScoringState, runtime: Any) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    def after_agent(self, state: ScoringState, runtime: Any) -> dict[str, Any] | None:
        try:
            self._finish(state)
        except Exception:
            log.exception("agentevals: ScoringMiddleware.after_agent failed; this run is not scored")
        return None

    async def aafter_agent(self, state: ScoringState, runtime: Any) -> dict[str, Any] | None:
        return self.after_agent(state, runtime)

    # -- call wrappers (for the system prompt, token usage and tool timings) -----------------------

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        started = time.perf_counter()
        try:
            response = handler(request)
        except BaseException as err:
            self._safely(self._model_failed, request, err)
            raise
        self._safely(self._model_done, request, response, started)
        return response

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        started = time.perf_counter()
        try:
            response = await handler(request)
        except BaseException as err:
            self._safely(self._model_failed, request, err)
            raise
        self._safely(self._model_done, request, response, started)
        return response

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        key = self._safely(self._tool_started, request)
        try:
            result = handler(request)
        except BaseException as err:
            self._safely(self._tool_done, key, None, err, request)
            raise
        self._safely(self._tool_done, key, result, None, None)
        return result

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        key = self._safely(self._tool_started, request)
        try:
            result = await handler(request)
        except BaseException as err:
            self._safely(self._tool_done, key, None, err, request)
            raise
        self._safely(self._tool_done, key, result, None, None)
        return result

    # -- lifecycle: failed runs are finished before results are read ---------------------------------

    def flush(self, timeout: float = 30.0) -> FlushReport:
        """Finish the runs that failed, then wait until every submitted run is scored and stored."""
        self._safely(self._finish_failed)
        return super().flush(timeout)

    async def aflush(self, timeout: float = 30.0) -> FlushReport:
        """:meth:`flush` for async code."""
        self._safely(self._finish_failed)
        return await super().aflush(timeout)

    def shutdown(self, timeout: float = 30.0) -> FlushReport:
        """Finish the runs that failed, then flush and stop the engine."""
        self._safely(self._finish_failed)
        return super().shutdown(timeout)

    # -- capture --------------------------------------------------------------------------------------

    def _safely(self, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except Exception:
            log.exception("agentevals: ScoringMiddleware capture failed; the run may be scored incompletely")
            return None

    def _begin(self, state: Mapping[str, Any], runtime: Any) -> dict[str, Any]:
        config = _config()
        if self._scored_by_handler(config):
            return {_STATE_KEY: {self.name: _NOT_CAPTURED}}
        run_id = _root_run_id(runtime) or _traced_agent_run_id() or uuid.uuid4()
        metadata = config.get("metadata") or {}
        agent_name = metadata.get("lc_agent_name") if isinstance(metadata, Mapping) else None
        trace = Trace(
            root_id=run_id,
            kind="agent",
            name=self.entity or (str(agent_name) if agent_name else None),
            inputs=None,
            tags=(),
            metadata=run_metadata(metadata),
            started_at=datetime.now(UTC),
            t0=time.perf_counter(),
        )
        _prefer_agent_span(trace.metadata, f"{self.name}.before_agent")
        with self._lock:
            if len(self._open) >= self.max_open_runs:
                self._open.popitem(last=False)  # runs that failed before after_agent
            self._open[str(run_id)] = trace
        return {_STATE_KEY: {self.name: str(run_id)}}

    def _scored_by_handler(self, config: Mapping[str, Any]) -> bool:
        """Whether a :class:`ScorerCallbackHandler` on this run feeds this middleware's engine. It then
        captures the run alone (failed runs too), so the engine scores the run once. A handler with an
        engine of its own does not count: each engine scores the run, into its own sinks."""
        handlers = getattr(config.get("callbacks"), "handlers", None) or ()
        for handler in handlers:
            if isinstance(handler, ScorerCallbackHandler) and handler.engine is self.engine:
                if not self._warned_double:
                    self._warned_double = True
                    log.warning(
                        "agentevals: %s and a ScorerCallbackHandler with the same engine are attached to "
                        "one agent; the handler scores its runs and the middleware steps aside. Attach one "
                        "of them to capture each run once.",
                        self.name,
                    )
                return True
        return False

    def _trace_for(self, state: Any) -> Trace | None:
        info = state.get(_STATE_KEY) if isinstance(state, Mapping) else None
        if not isinstance(info, Mapping):
            return None
        return self._open.get(str(info.get(self.name)))

    def _failed(self, trace: Trace, error: BaseException, state: Any) -> None:
        """A model or tool call of ``trace`` raised: the run fails unless the agent recovers (a retry or
        fallback middleware outside this one) within ``failure_grace`` seconds. Caller holds the lock."""
        messages = state.get("messages") if isinstance(state, Mapping) else None
        self._failing[str(trace.root_id)] = (time.perf_counter(), error, list(messages or []))
        self._wake_in(self.failure_grace)

    def _wake_in(self, delay: float) -> None:
        """Have the timer submit the failed runs whose grace is over in ``delay`` seconds: one timer at a
        time, re-armed for the runs still within their grace. Caller holds the lock."""
        if self._timer is None:
            self._timer = threading.Timer(max(delay, 0.0), self._safely, (self._grace_over,))
            self._timer.daemon = True
            self._timer.start()

    def _model_failed(self, request: Any, error: BaseException) -> None:
        state = getattr(request, "state", None)
        with self._lock:
            trace = self._trace_for(state)
            if trace is not None:
                trace.model_failed(0, error)
                self._failed(trace, error, state)

    def _grace_over(self) -> None:
        """The timer's job: submit the failed runs whose grace is over."""
        with self._lock:
            self._timer = None
            done = self._take_failed(everything=False)
        self._submit_failed(done)

    def _finish_failed(self) -> None:
        """Submit every failed run now, within its grace or not (before a flush, at shutdown or exit)."""
        if not self._failing:
            return
        with self._lock:
            done = self._take_failed(everything=True)
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        self._submit_failed(done)

    def _take_failed(self, *, everything: bool) -> list[tuple[Trace, float, BaseException, list[Any]]]:
        """Remove the failed runs whose grace is over (all with ``everything``) and re-arm the timer for
        the others. Caller holds the lock."""
        now, done = time.perf_counter(), []
        for key, (failed_at, error, messages) in list(self._failing.items()):
            if everything or now - failed_at >= self.failure_grace:
                del self._failing[key]
                trace = self._open.pop(key, None)
                if trace is not None:
                    done.append((trace, failed_at, error, messages))
        if self._failing:
            first = min(failed_at for failed_at, _, _ in self._failing.values())
            self._wake_in(first + self.failure_grace - now)
        return done

    def _submit_failed(self, done: list[tuple[Trace, float, BaseException, list[Any]]]) -> None:
        for trace, failed_at, error, messages in done:
            # The run ended when it failed, not when its grace ran out.
            finished = trace.seal({"messages": messages}, error=error, entity=trace.name, ended=failed_at)
            self.submit_lazy(finished, run_id=finished.root_id, trace_id=finished.root_id)

    def _model_done(self, request: Any, response: Any, started: float) -> None:
        system = getattr(request, "system_message", None)
        model = getattr(request, "model", None)
        model_name = (
            getattr(model, "model_name", None) or getattr(model, "model", None) or type(model).__name__
        )
        with self._lock:
            trace = self._trace_for(getattr(request, "state", None))
            if trace is None:
                return
            if trace.first_prompt is None and system is not None:
                trace.first_prompt = [system]
            self._failing.pop(str(trace.root_id), None)  # a later call succeeded: the agent recovered
            trace.model_ms += (time.perf_counter() - started) * 1000
            trace.models.append(str(model_name))
            for message in getattr(response, "result", None) or [response]:
                usage = getattr(message, "usage_metadata", None)
                if isinstance(usage, Mapping):
                    for k, v in usage.items():
                        if isinstance(v, int):
                            trace.usage[k] = trace.usage.get(k, 0) + v

    def _tool_started(self, request: Any) -> tuple[str, int] | None:
        call = getattr(request, "tool_call", None) or {}
        with self._lock:
            trace = self._trace_for(getattr(request, "state", None))
            if trace is None:
                return None
            self._failing.pop(str(trace.root_id), None)  # a later call started: the agent recovered
            key = uuid.uuid4().int
            trace.tool_started(
                key, str(call.get("name", "tool")), dict(call.get("args") or {}), call.get("id")
            )
            return str(trace.root_id), key

    def _tool_done(
        self, key: tuple[str, int] | None, result: Any, error: BaseException | None, request: Any
    ) -> None:
        if key is None:
            return
        with self._lock:
            trace = self._open.get(key[0])
            if trace is not None:
                trace.tool_ended(key[1], result, error)
                if error is not None:
                    self._failed(trace, error, getattr(request, "state", None))

    def _finish(self, state: Mapping[str, Any]) -> None:
        info = state.get(_STATE_KEY)
        key = str(info.get(self.name)) if isinstance(info, Mapping) else None
        if key == _NOT_CAPTURED:
            return
        with self._lock:
            trace = self._open.pop(key, None) if key is not None else None
            if key is not None:
                self._failing.pop(key, None)  # it reached the end: the agent recovered
        if trace is None:
            log.warning("agentevals: ScoringMiddleware saw no before_agent for this run; it is not scored")
            return
        outputs = {"messages": list(state.get("messages") or [])}
        finished = trace.seal(outputs, error=None, entity=trace.name, ended=time.perf_counter())
        self.submit_lazy(finished, run_id=finished.root_id, trace_id=finished.root_id)


def _root_run_id(runtime: Any) -> uuid.UUID | None:
    """The graph run's id when the caller set one (``config={"run_id": ...}``), to join traces."""
    value = getattr(getattr(runtime, "execution_info", None), "run_id", None)
    try:
        return uuid.UUID(str(value)) if value else None
    except ValueError:
        return None


def _traced_agent_run_id() -> uuid.UUID | None:
    """The agent's run id in LangSmith when LangChain traces to it, so feedback lands on that run: inside
    ``before_agent`` the current run tree is this node's run, whose parent is the agent's run."""
    from langsmith.run_helpers import get_current_run_tree  # langchain-core's own dependency

    parent = getattr(get_current_run_tree(), "parent_run_id", None)
    try:
        return uuid.UUID(str(parent)) if parent else None
    except ValueError:
        return None


def _prefer_agent_span(metadata: dict[str, Any], node: str) -> None:
    """Parent the run's evaluation events to the agent's span rather than to this hook's own node span.

    An OpenTelemetry LangChain instrumentation gives each graph node a span named after the node and
    makes it current, so inside ``before_agent`` the active span is that node's; its parent is the
    agent's. Any other active span (an application's, or none) is kept as captured."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None or TRACE_KEY not in metadata:
        return
    span = trace.get_current_span()
    parent = getattr(span, "parent", None)  # SDK spans know their parent's context; API spans do not
    if parent is None or not parent.is_valid or not str(getattr(span, "name", "")).endswith(node):
        return
    metadata[TRACE_KEY] = {
        "trace_id": format(parent.trace_id, "032x"),
        "span_id": format(parent.span_id, "016x"),
        "trace_flags": int(parent.trace_flags),
    }


def _config() -> Mapping[str, Any]:
    try:
        from langgraph.config import get_config

        return get_config()
    except Exception:  # outside a graph run (e.g. a hook called directly in a test)
        return {}
