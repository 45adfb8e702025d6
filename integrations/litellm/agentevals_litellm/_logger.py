"""``ScoringLogger``: a LiteLLM ``CustomLogger`` that scores ``completion`` / ``acompletion`` calls live."""

from __future__ import annotations

import asyncio
import atexit
import logging
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from agentevals import FlushReport, Run, Scorer
from agentevals.live import Engine, LiveScoring, import_litellm, is_scoring
from agentevals_litellm._pending import PATIENCE, Pending, PendingCalls

import_litellm()  # before LiteLLM's own import runs: the bundled price list, no network fetch
from litellm.integrations.custom_logger import CustomLogger  # noqa: E402

log = logging.getLogger("agentevals.litellm")

SKIP_KEY = "agentevals_skip"
"""Set ``metadata={"agentevals_skip": True}`` on a LiteLLM call to keep it out of scoring."""

_JUDGE_KEYS = (SKIP_KEY, "agentevals_judge")
_CALL_TYPES = {"completion", "acompletion"}
_CALLBACK_LISTS = (
    "callbacks",
    "input_callback",
    "success_callback",
    "failure_callback",
    "_async_success_callback",
    "_async_failure_callback",
)
_NOT_NOTED = "agentevals: could not note a LiteLLM call; it is scored only if LiteLLM reports it"
_POLL = 0.005  # seconds between looks at the calls whose callbacks flush() waits for
_SWEEP_EVERY = 0.1  # seconds between looks for callbacks that cannot come, while calls are made


class ScoringLogger(LiveScoring, CustomLogger):
    """Score raw LiteLLM chat calls: ``logger = ScoringLogger(scorers=..., sinks=...).register()``.

    Each successful ``completion``/``acompletion`` becomes one ``Run``: the request messages are the
    input (system, history, user), the reply (with its tool calls) the output; token usage, cost and
    model go to ``Run.metadata``. ``metadata={"ground_truth": ...}`` on the call sets the expected
    answer, ``metadata={"agentevals_entity": ...}`` the entity (default: the model).

    Calls made while a scorer runs (the LLM judges' own calls) are never scored, so there is no
    feedback loop; neither is a call with ``metadata={"agentevals_skip": True}``. A failed call becomes
    a ``Run`` with ``error`` set: scored by the scorers with ``score_errors=True`` (``score_errors=``
    here is the default of every scorer entry), skipped (``run_failed``) by the others. LiteLLM
    callbacks are process-global: :meth:`register` one logger once and :meth:`unregister` it to stop
    (per-call ``callbacks=[...]`` leak into later calls in LiteLLM).

    LiteLLM reports a call after it returns (from a thread, or from a task on the caller's event loop).
    :meth:`flush` first waits for the reports of the calls that have returned, so a call made just
    before it is scored. An async call whose report cannot come (``asyncio.run`` closed its loop first)
    is scored from the response kept when it returned (counted in ``rescued``, logged at INFO); a call
    whose report is over 5 s late and has no response kept is counted in ``lost`` (logged as a
    WARNING) and still scored if its report comes later. Streamed calls are scored from their report
    only.

    >>> from agentevals.scorers import create_includes_scorer
    >>> logger = ScoringLogger(scorers=[create_includes_scorer()], sinks=[]).register()  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        scorers: Mapping[str, Any] | Sequence[Scorer] | None = None,
        sinks: Sequence[Any] | None = None,
        engine: Engine | None = None,
        sampling: float | Mapping[str, Any] | None = None,
        entity: str | None = None,
        score_errors: bool | None = None,
    ) -> None:
        LiveScoring.__init__(
            self, scorers=scorers, sinks=sinks, engine=engine, sampling=sampling, score_errors=score_errors
        )
        CustomLogger.__init__(self)
        self.entity = entity
        self.skipped = 0
        self.rescued = 0
        self.lost = 0
        self._pending = PendingCalls()
        self._swept = 0.0

    # -- registration ----------------------------------------------------------------------------------

    def register(self) -> ScoringLogger:
        """Add this logger to LiteLLM's process-wide callbacks (once) and return it."""
        lm = import_litellm()
        if not any(c is self for c in lm.callbacks):
            setattr(lm, "callbacks", [*lm.callbacks, self])  # noqa: B010  (a module attribute)
        # After the engine's own exit hook, so it runs first: calls rescued at exit are still scored.
        atexit.unregister(self._at_exit)
        atexit.register(self._at_exit)
        return self

    def unregister(self) -> None:
        """Remove this logger from every LiteLLM callback list. LiteLLM copies ``litellm.callbacks`` into
        lists of its own on the first call, and adds no second logger of a class it already holds, so
        clearing ``litellm.callbacks`` alone leaves this one active and keeps a new one out."""
        lm = import_litellm()
        for name in _CALLBACK_LISTS:
            current = getattr(lm, name, None)
            if isinstance(current, list):
                setattr(lm, name, [c for c in current if c is not self])
        atexit.unregister(self._at_exit)

    # -- flushing: first the calls whose LiteLLM report is due --------------------------------------

    def flush(self, timeout: float = 30.0) -> FlushReport:
        """Wait for LiteLLM's reports of the calls that have returned, then as :meth:`LiveScoring.flush`
        (``timeout`` bounds both)."""
        return super().flush(self._settle(timeout))

    async def aflush(self, timeout: float = 30.0) -> FlushReport:
        """:meth:`flush` for async code."""
        if not _is_seconds(timeout):
            return await super().aflush(timeout)  # the engine says what is wrong with it
        deadline = time.monotonic() + timeout
        while self._sweep(None) and time.monotonic() < deadline:
            await asyncio.sleep(_POLL)  # this loop delivers the reports of its own calls meanwhile
        return await super().aflush(max(0.0, deadline - time.monotonic()))

    def shutdown(self, timeout: float = 30.0) -> FlushReport:
        """Flush as :meth:`flush`, then stop the engine."""
        return super().shutdown(self._settle(timeout))

    def _settle(self, timeout: float) -> float:
        """Wait up to ``timeout`` for the reports due (those of the loop this thread runs cannot come
        while it waits: scored at once); the time left."""
        if not _is_seconds(timeout):
            return timeout  # the engine says what is wrong with it
        deadline = time.monotonic() + timeout
        blocked = _running_loop()
        while self._sweep(blocked) and time.monotonic() < deadline:
            time.sleep(_POLL)
        return max(0.0, deadline - time.monotonic())

    def _sweep(self, blocked: asyncio.AbstractEventLoop | None) -> int:
        """Score the calls whose report cannot come, give up those overdue; how many are still due."""
        due = self._pending.take(time.monotonic(), blocked)
        if due.rescue:
            self._rescue(due.rescue)
        if due.lost:
            self.lost += len(due.lost)
            log.warning(
                "agentevals: %d LiteLLM call(s) returned but LiteLLM did not report them within %g s; "
                "they are not scored unless the report still comes (ScoringLogger.lost counts them)",
                len(due.lost),
                PATIENCE,
            )
        return due.waiting

    def _rescue(self, calls: Iterable[Pending]) -> None:
        rescued = 0
        for call in calls:
            details = call.details
            start = details.get("start_time")
            try:
                run = self._run(details, call.response, start, call.ended, None)
            except Exception:
                log.exception("agentevals: could not capture a LiteLLM call; it is not scored")
                continue
            if run is not None and self.submit(run):
                rescued += 1
        self.rescued += rescued
        if rescued:
            log.info(
                "agentevals: scored %d LiteLLM call(s) from their response: LiteLLM's report of them "
                "could not come (their event loop had closed) or was over %g s late",
                rescued,
                PATIENCE,
            )

    def _at_exit(self) -> None:
        try:
            self._sweep(None)
        except Exception:
            log.exception("agentevals: scoring the unreported LiteLLM calls at exit failed")

    # -- LiteLLM hooks: sync calls log on a LiteLLM thread, async calls on the caller's loop ----------

    def log_post_api_call(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        """Inside a sync call, once the provider replied: its report is now due (an async call is noted
        as it returns, below: one cancelled before that has no report to wait for)."""
        try:
            if not isinstance(kwargs, Mapping) or kwargs.get("call_type") != "completion":
                return
            if not _awaits_report(kwargs):
                return  # not a call to score (a judge's among them): no sweep from its context either
            self._pending.note(kwargs["litellm_call_id"], kwargs, time.monotonic())
            self._sweep_now_and_then()
        except Exception:
            log.exception(_NOT_NOTED)

    async def async_post_call_success_deployment_hook(
        self, request_data: Any, response: Any, call_type: Any
    ) -> None:
        """Inside an async call, as it returns: its response is kept until its report comes."""
        try:
            details = getattr(request_data.get("litellm_logging_obj"), "model_call_details", None)
            if isinstance(details, Mapping) and _awaits_report(details) and _reply_message(response):
                loop = asyncio.get_running_loop()
                self._pending.answered(details["litellm_call_id"], details, response, loop, time.monotonic())
                self._sweep_now_and_then()
        except Exception:
            log.exception(_NOT_NOTED)

    def _sweep_now_and_then(self) -> None:
        """While calls are made: an application that runs each request in its own ``asyncio.run`` gets
        the calls of the ended ones scored without a flush."""
        now = time.monotonic()
        if now - self._swept >= _SWEEP_EVERY:
            self._swept = now
            self._sweep(None)

    def log_success_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        self._capture(kwargs, response_obj, start_time, end_time, None)

    async def async_log_success_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._capture(kwargs, response_obj, start_time, end_time, None)

    def log_failure_event(self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any) -> None:
        self._capture(kwargs, None, start_time, end_time, kwargs.get("exception") or "unknown error")

    async def async_log_failure_event(
        self, kwargs: Any, response_obj: Any, start_time: Any, end_time: Any
    ) -> None:
        self._capture(kwargs, None, start_time, end_time, kwargs.get("exception") or "unknown error")

    # -- capture ------------------------------------------------------------------------------------

    def _capture(self, kwargs: Any, response: Any, start: Any, end: Any, error: Any) -> None:
        try:
            # Settled first: a call noted in one context may be left out in its report's.
            if not isinstance(kwargs, Mapping) or not self._reported(kwargs) or self._skip(kwargs):
                return
            run = self._run(kwargs, response, start, end, error)
        except Exception:
            log.exception("agentevals: could not capture a LiteLLM call; it is not scored")
            return
        if run is not None:
            self.submit(run)

    def _skip(self, kwargs: Mapping[str, Any]) -> bool:
        if _other_call(kwargs):
            return True
        if _left_out(kwargs):
            self.skipped += 1
            return True
        return False

    def _reported(self, kwargs: Mapping[str, Any]) -> bool:
        """Settle the call's report; ``False`` when the call was already scored from its response."""
        call_id = kwargs.get("litellm_call_id")
        if not isinstance(call_id, str):
            return True
        capture, was_lost = self._pending.settle(call_id)
        if was_lost:
            self.lost -= 1
            log.info("agentevals: LiteLLM reported call %s late; it is scored after all", call_id)
        return capture

    def _run(self, kwargs: Mapping[str, Any], response: Any, start: Any, end: Any, error: Any) -> Run | None:
        messages = list(kwargs.get("messages") or [])
        if not messages:
            return None
        response = kwargs.get("complete_streaming_response") or response
        reply = _reply_message(response)
        metadata = _metadata(kwargs)
        call_id = kwargs.get("litellm_call_id")
        extra: dict[str, Any] = {
            "model": kwargs.get("model"),
            "provider": kwargs.get("custom_llm_provider"),
            "usage": _usage(response),
            "cost_usd": _cost(kwargs, response),
            "stream": bool(kwargs.get("stream")),
        }
        extra.update({k: v for k, v in metadata.items() if _is_user_key(k)})
        duration = (
            (end - start).total_seconds() * 1000
            if isinstance(start, datetime) and isinstance(end, datetime)
            else None
        )
        return Run.from_messages(
            [*messages, *([reply] if reply else [])],
            run_id=call_id,
            trace_id=kwargs.get("litellm_trace_id") or call_id,
            entity=self.entity or metadata.get("agentevals_entity") or kwargs.get("model"),
            ground_truth=metadata.get("ground_truth"),
            error=None if error is None else _describe(error),
            started_at=start if isinstance(start, datetime) else None,
            duration_ms=duration,
            metadata={k: v for k, v in extra.items() if v is not None},
        )


def _awaits_report(kwargs: Mapping[str, Any]) -> bool:
    """Whether a returning call is one to score whose report :meth:`ScoringLogger.flush` waits for."""
    call_id = kwargs.get("litellm_call_id")
    if not isinstance(call_id, str) or kwargs.get("stream") or not kwargs.get("messages"):
        return False
    return not _other_call(kwargs) and not _left_out(kwargs)


def _other_call(kwargs: Mapping[str, Any]) -> bool:
    """Not a chat completion (embeddings, images, ...): never scored."""
    call_type = kwargs.get("call_type")
    return call_type is not None and call_type not in _CALL_TYPES


def _left_out(kwargs: Mapping[str, Any]) -> bool:
    """A judge's own call, or one flagged ``agentevals_skip``."""
    if is_scoring():
        return True
    metadata = _metadata(kwargs)
    return any(metadata.get(k) for k in _JUDGE_KEYS)


def _is_seconds(value: Any) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and math.isfinite(value) and value >= 0


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _metadata(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    params = kwargs.get("litellm_params") or {}
    metadata = params.get("metadata") if isinstance(params, Mapping) else None
    if not isinstance(metadata, Mapping):
        metadata = kwargs.get("metadata")
    return dict(metadata) if isinstance(metadata, Mapping) else {}


def _is_user_key(key: str) -> bool:
    internal = ("hidden_params", "ground_truth", "agentevals_entity", "model_group", "deployment")
    return key not in internal and not key.startswith(("litellm", "user_api_key"))


def _reply_message(response: Any) -> dict[str, Any] | None:
    choices = getattr(response, "choices", None)
    if not choices:
        return None
    message = getattr(choices[0], "message", None)
    if message is None:
        return None
    dump = message.model_dump() if hasattr(message, "model_dump") else dict(message)
    reply: dict[str, Any] = {"role": "assistant", "content": dump.get("content") or ""}
    if dump.get("tool_calls"):
        reply["tool_calls"] = [
            {"id": c.get("id"), "type": "function", "function": dict(c.get("function") or {})}
            for c in dump["tool_calls"]
        ]
    reasoning = dump.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        reply["reasoning_content"] = reasoning
    return reply


def _usage(response: Any) -> dict[str, int] | None:
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    keys = ("prompt_tokens", "completion_tokens", "total_tokens")
    return {k: int(getattr(usage, k, 0) or 0) for k in keys}


def _cost(kwargs: Mapping[str, Any], response: Any) -> Any:
    """LiteLLM's cost of the call: in its report, or (a call scored from its response) on the response."""
    cost = kwargs.get("response_cost")
    if cost is None:
        hidden = getattr(response, "_hidden_params", None)
        cost = hidden.get("response_cost") if isinstance(hidden, Mapping) else None
    return cost


def _describe(error: Any) -> str:
    return f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else str(error)
