"""``@scored``: live scoring for plain Python functions."""

from __future__ import annotations

import functools
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, ParamSpec, TypeVar, cast

from agentevals._engine._live import Engine, LiveScoring
from agentevals._model._messages import Message
from agentevals._model._run import Run
from agentevals._scoring._scorer import Scorer

log = logging.getLogger("agentevals.capture")

P = ParamSpec("P")
R = TypeVar("R")

_INPUT_NAMES = ("messages", "prompt", "input", "question", "query", "text")


def scored(
    *,
    scorers: Mapping[str, Any] | Sequence[Scorer] | None = None,
    sinks: Sequence[Any] | None = None,
    engine: Engine | None = None,
    sampling: float | Mapping[str, Any] | None = None,
    entity: str | None = None,
    input_arg: str | None = None,
    score_errors: bool | None = None,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Score every call of a sync or async function that takes a prompt/messages and returns text/messages.

    The input is the argument named ``input_arg`` (default: the first of ``messages``, ``prompt``,
    ``input``, ``question``, ``query``, ``text``, else the first argument). The call returns at once;
    scoring runs in the background. The decorated function has an ``engine`` attribute (flush it before
    exit). A raising function re-raises; its run is submitted with ``error`` set, scored by the scorers
    with ``score_errors=True`` (``score_errors=`` is every entry's default) and recorded as skipped
    (``run_failed``) by the others.

    >>> from agentevals.scorers import create_includes_scorer
    >>> @scored(scorers=[create_includes_scorer()])              # doctest: +SKIP
    ... def answer(prompt: str) -> str:
    ...     return "Paris"
    >>> answer("Capital of France?"); answer.engine.flush()    # doctest: +SKIP
    """
    scoring = _Scored(
        engine=engine, scorers=scorers, sinks=sinks, sampling=sampling, score_errors=score_errors
    )

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            raise TypeError(
                f"@scored cannot wrap the generator {fn.__qualname__}; wrap a function that returns "
                "the whole text (collect the stream first)"
            )
        capture = _Capture(fn, scoring, entity or fn.__qualname__, input_arg)
        if inspect.iscoroutinefunction(fn):
            async_fn = cast(Callable[..., Awaitable[Any]], fn)

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                started, t0 = datetime.now(UTC), time.perf_counter()
                try:
                    result = await async_fn(*args, **kwargs)
                except BaseException as err:
                    capture.done(args, kwargs, None, err, started, t0)
                    raise
                capture.done(args, kwargs, result, None, started, t0)
                return result

            wrapper: Callable[..., Any] = async_wrapper
        else:

            @functools.wraps(fn)
            def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
                started, t0 = datetime.now(UTC), time.perf_counter()
                try:
                    result = fn(*args, **kwargs)
                except BaseException as err:
                    capture.done(args, kwargs, None, err, started, t0)
                    raise
                capture.done(args, kwargs, result, None, started, t0)
                return result

            wrapper = sync_wrapper
        wrapper.engine = scoring.engine  # type: ignore[attr-defined]
        return cast(Callable[P, R], wrapper)

    return decorate


class _Scored(LiveScoring):
    """The engine wiring of one ``@scored`` function."""

    label = "@scored"


class _Capture:
    """Turns one call (arguments, result or error) into a ``Run`` and submits it."""

    def __init__(
        self,
        fn: Callable[..., Any],
        scoring: LiveScoring,
        entity: str,
        input_arg: str | None,
    ) -> None:
        self.submit = scoring.submit
        self.entity = entity
        self.signature: inspect.Signature | None
        try:
            self.signature = inspect.signature(fn)
        except (TypeError, ValueError):
            self.signature = None
        names = list(self.signature.parameters) if self.signature is not None else []
        if input_arg is not None and self.signature is not None and input_arg not in names:
            raise ValueError(f"@scored(input_arg={input_arg!r}): {fn.__qualname__} has no such parameter")
        self.input_name = input_arg or next((n for n in _INPUT_NAMES if n in names), None)
        if self.input_name is None:
            positional = [
                n
                for n, p in (self.signature.parameters.items() if self.signature else ())
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and n not in ("self", "cls")
            ]
            self.input_name = positional[0] if positional else None

    def done(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        result: Any,
        error: BaseException | None,
        started: datetime,
        t0: float,
    ) -> None:
        duration_ms = (time.perf_counter() - t0) * 1000
        try:
            run = run_from_call(
                self._input_of(args, kwargs),
                result,
                entity=self.entity,
                error=None if error is None else f"{type(error).__name__}: {error}",
                started_at=started,
                duration_ms=duration_ms,
            )
        except Exception:
            log.exception("agentevals: could not capture a call of %s", self.entity)
            return
        self.submit(run)

    def _input_of(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.signature is None or self.input_name is None:
            return args[0] if args else None
        try:
            bound = self.signature.bind_partial(*args, **kwargs)
        except TypeError:
            return args[0] if args else None
        return bound.arguments.get(self.input_name)


def run_from_call(value: Any, result: Any, **fields: Any) -> Run:
    """A ``Run`` from a function's input (prompt or messages) and its result (text or messages)."""
    from agentevals._model._convert import to_messages

    in_msgs = _message_list(value)
    out_msgs = _message_list(result)
    if out_msgs is not None and any(m.role == "user" for m in out_msgs):
        return Run.from_messages(out_msgs, **fields)  # the function returned the whole conversation
    if in_msgs is not None:
        if out_msgs is None:
            out_msgs = (
                [] if result is None else to_messages([{"role": "assistant", "content": _text(result)}])
            )
        return Run.from_messages([*in_msgs, *out_msgs], **fields)
    return Run(input=value, output=out_msgs if out_msgs is not None else result, **fields)


def _message_list(value: Any) -> list[Any] | None:
    """Canonical messages if ``value`` is a message or a list of messages, else ``None``."""
    from agentevals._model._convert import to_messages

    if _is_message(value):
        value = [value]
    if not isinstance(value, list | tuple) or not value or not all(_is_message(m) for m in value):
        return None
    return list(to_messages(list(value)))


def _is_message(value: Any) -> bool:
    if isinstance(value, Message):
        return True
    if isinstance(value, Mapping):
        return "role" in value
    # a LangChain BaseMessage, recognised without importing LangChain
    return hasattr(value, "type") and hasattr(value, "content") and hasattr(value, "additional_kwargs")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)
