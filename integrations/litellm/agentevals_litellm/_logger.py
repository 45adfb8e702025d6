"""``ScoringLogger``: a LiteLLM ``CustomLogger`` that scores ``completion`` / ``acompletion`` calls live."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from agentevals import Run, Scorer
from agentevals.live import Engine, LiveScoring, import_litellm, is_scoring

import_litellm()  # before LiteLLM's own import runs: the bundled price list, no network fetch
from litellm.integrations.custom_logger import CustomLogger  # noqa: E402

log = logging.getLogger("agentevals.litellm")

SKIP_KEY = "agentevals_skip"
"""Set ``metadata={"agentevals_skip": True}`` on a LiteLLM call to keep it out of scoring."""

_JUDGE_KEYS = (SKIP_KEY, "agentevals_judge")
_CALL_TYPES = {"completion", "acompletion"}
_CALLBACK_LISTS = (
    "callbacks",
    "success_callback",
    "failure_callback",
    "_async_success_callback",
    "_async_failure_callback",
)


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

    # -- registration ----------------------------------------------------------------------------------

    def register(self) -> ScoringLogger:
        """Add this logger to LiteLLM's process-wide callbacks (once) and return it."""
        lm = import_litellm()
        if not any(c is self for c in lm.callbacks):
            setattr(lm, "callbacks", [*lm.callbacks, self])  # noqa: B010  (a module attribute)
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

    # -- LiteLLM hooks: sync calls log on a LiteLLM thread, async calls on the caller's loop ----------

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
            if not isinstance(kwargs, Mapping) or self._skip(kwargs):
                return
            run = self._run(kwargs, response, start, end, error)
        except Exception:
            log.exception("agentevals: could not capture a LiteLLM call; it is not scored")
            return
        if run is not None:
            self.submit(run)

    def _skip(self, kwargs: Mapping[str, Any]) -> bool:
        if is_scoring():
            self.skipped += 1
            return True
        if kwargs.get("call_type") not in _CALL_TYPES and kwargs.get("call_type") is not None:
            return True
        metadata = _metadata(kwargs)
        if any(metadata.get(k) for k in _JUDGE_KEYS):
            self.skipped += 1
            return True
        return False

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
            "cost_usd": kwargs.get("response_cost"),
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


def _describe(error: Any) -> str:
    return f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else str(error)
