"""``ScorerCallbackHandler``: score any LangChain runnable, chain, agent or LangGraph graph live."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from agentevals import Scorer
from agentevals.live import Engine, LiveScoring
from agentevals_langchain._recorder import Trace, run_metadata, snapshot

log = logging.getLogger("agentevals.langchain")


class ScorerCallbackHandler(LiveScoring, BaseCallbackHandler):
    """Capture each root run (chain, agent, graph) as one ``Run`` and hand it to a scoring engine.

    Attach it with ``config={"callbacks": [handler]}`` or ``runnable.with_config(callbacks=[handler])``.
    It follows runs by ``run_id``/``parent_run_id`` and records the root's input messages (system,
    history, user), every chat-model call (reasoning, token usage), every tool call (arguments, result,
    error, duration) and retrieved documents (``Run.context``). When the root run ends it builds one
    ``Run`` (``run_id`` = ``trace_id`` = the root's run id) and submits it; scoring happens in the
    background. One handler may serve any number of concurrent invocations, sync or async, streaming or
    not. Put ``ground_truth`` in the run's ``metadata`` to score against an expected answer.
    A chain that raises gives a ``Run`` with ``error`` set: scored by the scorers with ``score_errors=True``
    (``score_errors=`` here is the default of every scorer entry), skipped (``run_failed``) by the others.
    Any other keyword is a ``ScoringEngine`` option (``broker=``, ``queue=``, ``budgets=``, ``breaker=``,
    ``redact=``...) for the engine it builds; or pass a ready ``engine=`` instead of ``scorers=`` and all
    of them.

    >>> from agentevals.scorers import create_includes_scorer
    >>> handler = ScorerCallbackHandler(scorers=[create_includes_scorer()], sinks=[])  # doctest: +SKIP
    >>> chain.invoke("Capital of France?", config={"callbacks": [handler],      # doctest: +SKIP
    ...              "metadata": {"ground_truth": "Paris"}})
    >>> handler.flush()                                                        # doctest: +SKIP
    """

    # Capture only copies references under a lock (microseconds): running inline avoids a thread hop
    # per event under ``ainvoke``.
    run_inline = True
    raise_error = False

    def __init__(
        self,
        *,
        scorers: Mapping[str, Any] | Sequence[Scorer] | None = None,
        sinks: Sequence[Any] | None = None,
        engine: Engine | None = None,
        sampling: float | Mapping[str, Any] | None = None,
        entity: str | None = None,
        score_errors: bool | None = None,
        max_open_runs: int = 10_000,
        **engine_options: Any,
    ) -> None:
        if max_open_runs < 1:
            raise ValueError(f"max_open_runs must be >= 1, got {max_open_runs!r}")
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
        self.max_open_runs = max_open_runs
        self._lock = threading.Lock()
        # Keyed by ``run_id.int``: hashed in C, where a UUID key costs a Python-level __hash__ per lookup.
        self._traces: dict[int, Trace] = {}  # open root runs
        self._owner: dict[int, Trace] = {}  # every open run, root or child -> its root's trace
        self.dropped_open_runs = 0

    # -- lifecycle --------------------------------------------------------------------------------

    @property
    def open_runs(self) -> int:
        """Root runs started and not yet ended (their captured data is still in memory)."""
        with self._lock:
            return len(self._traces)

    # -- bookkeeping --------------------------------------------------------------------------------

    def _join(self, run_id: UUID, parent_run_id: UUID | None) -> Trace | None:
        """Record ``run_id`` as a child of the open trace its parent belongs to and return that trace;
        ``None`` when the parent is not being followed (the run is a new root). Caller holds the lock."""
        if parent_run_id is None:
            return None
        trace = self._owner.get(parent_run_id.int)
        if trace is not None:
            key = run_id.int
            self._owner[key] = trace
            trace.run_ids.append(key)
            if not trace.span_settled:
                trace.settle_span()
        return trace

    def _open_root(
        self,
        kind: str,
        run_id: UUID,
        name: str | None,
        inputs: Any,
        tags: list[str] | None,
        metadata: dict[str, Any] | None,
    ) -> Trace:
        """Start following a new root run. Caller holds the lock."""
        if len(self._traces) >= self.max_open_runs:
            self._evict_oldest()
        key = run_id.int
        trace = Trace(
            root_id=run_id,
            kind=kind,
            name=name,
            inputs=snapshot(inputs),
            tags=tuple(tags) if tags else (),
            metadata=run_metadata(metadata),
            started_at=datetime.now(UTC),
            t0=time.perf_counter(),
            run_ids=[key],
        )
        self._traces[key] = trace
        self._owner[key] = trace
        return trace

    def _evict_oldest(self) -> None:
        oldest = self._traces.pop(next(iter(self._traces)))
        for key in oldest.run_ids:
            self._owner.pop(key, None)
        self.dropped_open_runs += 1
        log.warning(
            "agentevals: %d root runs are open at once (max_open_runs); dropped the oldest (%s) "
            "without scoring it. Runs that never end (an abandoned stream) cause this.",
            self.max_open_runs,
            oldest.root_id,
        )

    def _trace_of(self, run_id: UUID) -> Trace | None:
        return self._owner.get(run_id.int)

    def _is_root(self, run_id: UUID) -> bool:
        """Whether ``run_id`` is an open root run: a lock-free check (one dict read) that lets the ends
        of child runs, most of the events, skip :meth:`_close`; ``_close`` checks again under the lock."""
        return run_id.int in self._traces

    def _close(self, run_id: UUID, outputs: Any, error: BaseException | None, inputs: Any = None) -> None:
        """End a run; when it is a root, release its memory and submit its ``Run``. ``inputs`` are the
        root's inputs when only its end knows them (a streamed chain starts with ``{"input": ""}``)."""
        with self._lock:
            trace = self._traces.pop(run_id.int, None)
            if trace is None:
                return  # not a root (or already closed)
            for key in trace.run_ids:
                self._owner.pop(key, None)
        if inputs is not None:
            trace.inputs = snapshot(inputs)
        if not trace.span_settled:  # a root without child runs: its own span (if any) is current now
            trace.settle_span()
        # The Run is built on the engine's thread, and only if sampled.
        finished = trace.seal(outputs, error=error, entity=self.entity, ended=time.perf_counter())
        self.submit_lazy(finished, run_id=finished.root_id, trace_id=finished.root_id)

    # -- chains -------------------------------------------------------------------------------------

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            with self._lock:
                if self._join(run_id, parent_run_id) is not None:
                    return  # most chain starts are child runs: only their ids are recorded
                name = kwargs.get("name") or (serialized or {}).get("name")
                self._open_root("chain", run_id, name, inputs, tags, metadata)
        except Exception:
            _capture_failed("on_chain_start")

    def on_chain_end(self, outputs: Any, *, run_id: UUID, inputs: Any = None, **kwargs: Any) -> None:
        if self._is_root(run_id):
            try:
                self._close(run_id, outputs, None, inputs)
            except Exception:
                _capture_failed("on_chain_end")

    def on_chain_error(
        self, error: BaseException, *, run_id: UUID, inputs: Any = None, **kwargs: Any
    ) -> None:
        if self._is_root(run_id):
            try:
                self._close(run_id, None, error, inputs)
            except Exception:
                _capture_failed("on_chain_error")

    # -- models ---------------------------------------------------------------------------------------

    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            prompt = messages[0] if messages else None
            self._model_start("chat_model", serialized, prompt, run_id, parent_run_id, tags, metadata, kwargs)
        except Exception:
            _capture_failed("on_chat_model_start")

    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            prompt = [("user", prompts[0])] if prompts else None
            self._model_start("llm", serialized, prompt, run_id, parent_run_id, tags, metadata, kwargs)
        except Exception:
            _capture_failed("on_llm_start")

    def _model_start(
        self,
        kind: str,
        serialized: dict[str, Any] | None,
        prompt: list[Any] | None,
        run_id: UUID,
        parent_run_id: UUID | None,
        tags: list[str] | None,
        metadata: dict[str, Any] | None,
        kwargs: dict[str, Any],
    ) -> None:
        meta = metadata or {}
        params = kwargs.get("invocation_params") or {}
        model = meta.get("ls_model_name") or params.get("model") or params.get("model_name")
        name = kwargs.get("name") or (serialized or {}).get("name") or ""
        with self._lock:
            trace = self._join(run_id, parent_run_id) or self._open_root(
                kind, run_id, name, prompt, tags, metadata
            )
            trace.model_started(run_id.int, str(model or name), prompt)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        try:
            self._model_end(run_id, response)
        except Exception:
            _capture_failed("on_llm_end")

    def _model_end(self, run_id: UUID, response: Any) -> None:
        with self._lock:
            trace = self._trace_of(run_id)
            if trace is not None:
                trace.model_ended(run_id.int, response)
        if self._is_root(run_id):
            self._close(run_id, response, None)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        try:
            self._model_error(run_id, error)
        except Exception:
            _capture_failed("on_llm_error")

    def _model_error(self, run_id: UUID, error: BaseException) -> None:
        with self._lock:
            trace = self._trace_of(run_id)
            if trace is not None:
                trace.model_failed(run_id.int, error)
        if self._is_root(run_id):
            self._close(run_id, None, error)

    # -- tools ----------------------------------------------------------------------------------------

    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            self._tool_start(serialized, input_str, inputs, run_id, parent_run_id, tags, metadata, kwargs)
        except Exception:
            _capture_failed("on_tool_start")

    def _tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        inputs: Any,
        run_id: UUID,
        parent_run_id: UUID | None,
        tags: list[str] | None,
        metadata: dict[str, Any] | None,
        kwargs: dict[str, Any],
    ) -> None:
        name = str((serialized or {}).get("name") or kwargs.get("name") or "tool")
        args = dict(inputs) if isinstance(inputs, Mapping) else {"input": input_str}
        call_id = kwargs.get("tool_call_id")
        with self._lock:
            trace = self._join(run_id, parent_run_id) or self._open_root(
                "tool", run_id, name, args, tags, metadata
            )
            trace.tool_started(run_id.int, name, args, str(call_id) if call_id else None)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        try:
            self._tool_end(run_id, output, None)
        except Exception:
            _capture_failed("on_tool_end")

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        try:
            self._tool_end(run_id, None, error)
        except Exception:
            _capture_failed("on_tool_error")

    def _tool_end(self, run_id: UUID, output: Any, error: BaseException | None) -> None:
        with self._lock:
            trace = self._trace_of(run_id)
            if trace is not None:
                trace.tool_ended(run_id.int, output, error)
        if self._is_root(run_id):
            self._close(run_id, output, error)

    # -- retrievers ---------------------------------------------------------------------------------

    def on_retriever_start(
        self,
        serialized: dict[str, Any] | None,
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        try:
            with self._lock:
                if self._join(run_id, parent_run_id) is not None:
                    return
                name = kwargs.get("name") or (serialized or {}).get("name") or "retriever"
                self._open_root("retriever", run_id, name, query, tags, metadata)
        except Exception:
            _capture_failed("on_retriever_start")

    def on_retriever_end(self, documents: Sequence[Any], *, run_id: UUID, **kwargs: Any) -> None:
        try:
            self._retriever_end(run_id, documents)
        except Exception:
            _capture_failed("on_retriever_end")

    def _retriever_end(self, run_id: UUID, documents: Sequence[Any]) -> None:
        with self._lock:
            trace = self._trace_of(run_id)
            if trace is not None:
                trace.documents_retrieved(documents)
        if self._is_root(run_id):
            self._close(run_id, list(documents), None)

    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        if self._is_root(run_id):
            try:
                self._close(run_id, None, error)
            except Exception:
                _capture_failed("on_retriever_error")


def _capture_failed(event: str) -> None:
    """A capture bug is logged, never raised into the user's chain (every callback catches it here)."""
    log.exception("agentevals: capture failed in %s; this run may be scored incompletely", event)
