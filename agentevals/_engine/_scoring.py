"""One scorer call as the engine makes it: timed out, failures as records, marked live, redacted."""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any

from agentevals._failure import error_record
from agentevals._result import ScoreFailure, ScoreRecord, ScoreResult, ScoreSkipped
from agentevals._run import Run
from agentevals._scorer import Scorer
from agentevals.sinks._errors import really_cancelled

Redactor = Callable[[ScoreRecord], ScoreRecord]


async def score_once(
    run: Run, scorer: Scorer, timeout: float | None, concurrency: asyncio.Semaphore
) -> ScoreRecord:
    """The scorer's result, a ``ScoreSkipped`` when a step skips the run, or a ``ScoreFailure`` when it
    raises or exceeds ``timeout`` seconds."""
    async with concurrency:
        return await _guarded(scorer.score(run, source="live"), run, scorer, timeout, time.perf_counter())


def score_inline(run: Run, scorer: Scorer, timeout: float | None) -> ScoreRecord | asyncio.Task[ScoreRecord]:
    """Score right here, with no task, when the scorer finishes without waiting (its steps are sync).

    Should a step await something after all, the rest of the call continues in a task, in the same
    context, under ``timeout``; the task is returned.
    """
    started = time.perf_counter()
    call = scorer.score(run, source="live")
    context = contextvars.copy_context()  # the scorer's context variables stay out of the engine's
    try:
        waiting_on = context.run(call.send, None)
    except StopIteration as done:
        result: ScoreResult = done.value
        return result
    except BaseException as err:  # scorer errors become data and never escape, whatever they are:
        # the engine's own cancellation only arrives at an await, never inside this synchronous call
        return _failure(run, scorer, err, started)
    rest = _guarded(_Resumed(call, waiting_on), run, scorer, timeout, started)
    return asyncio.get_running_loop().create_task(rest, context=context)


async def _guarded(
    call: Awaitable[ScoreResult], run: Run, scorer: Scorer, timeout: float | None, started: float
) -> ScoreRecord:
    try:
        async with asyncio.timeout(timeout):
            return await call
    except TimeoutError:
        error: BaseException = TimeoutError(
            f"scorer {scorer.id!r} did not finish within {timeout} s (raise the ScorerEntry "
            "timeout or the engine's scorer_timeout if it needs longer)"
        )
    except BaseException as err:  # scorer errors become data and never escape (SystemExit too)
        if really_cancelled(err):  # the engine's own task is being cancelled: let it
            raise
        error = err
    return _failure(run, scorer, error, started)


def _failure(run: Run, scorer: Scorer, error: BaseException, started: float) -> ScoreFailure | ScoreSkipped:
    return error_record(
        scorer_id=scorer.id,
        scorer_name=scorer.name,
        run=run,
        error=error,
        source="live",
        duration_ms=(time.perf_counter() - started) * 1000,
    )


class _Resumed:
    """Awaitable continuing a coroutine that already ran up to its first suspension.

    It hands the future the coroutine is waiting on to the task driving it, then relays every value
    and exception between the two, as ``await`` would have from the start.
    """

    __slots__ = ("_call", "_waiting_on")

    def __init__(self, call: Coroutine[Any, Any, ScoreResult], waiting_on: Any) -> None:
        self._call = call
        self._waiting_on = waiting_on

    def __await__(self) -> Generator[Any, Any, ScoreResult]:
        call, waiting_on = self._call, self._waiting_on
        while True:
            sent: Any = None
            error: BaseException | None = None
            try:
                sent = yield waiting_on
            except GeneratorExit:
                call.close()
                raise
            except BaseException as err:  # thrown in by the task (e.g. cancellation): pass it on
                error = err
            try:
                waiting_on = call.send(sent) if error is None else call.throw(error)
            except StopIteration as done:
                result: ScoreResult = done.value
                return result


def finalize(record: ScoreRecord, entity: str | None, redact: Redactor | None) -> ScoreRecord:
    """Give ``record`` its entity, then redact it; a failing redactor withholds the content."""
    if record.entity != entity:
        record = record.model_copy(update={"entity": entity})
    if redact is None:
        return record
    try:
        redacted = redact(record)
        if not isinstance(redacted, ScoreResult | ScoreFailure | ScoreSkipped):
            raise TypeError(f"redact must return a ScoreRecord, got {type(redacted).__name__}")
        return redacted
    except BaseException as err:  # runs on the engine's thread: no KeyboardInterrupt is meant for it
        # Never forward unredacted data: keep only the ids and the error.
        return ScoreFailure(
            scorer_id=record.scorer_id,
            scorer_name=record.scorer_name,
            run_id=record.run_id,
            trace_id=record.trace_id,
            entity=record.entity,
            source="live",
            duration_ms=record.duration_ms,
            error_type="RedactionError",
            error_message=f"redact raised {type(err).__name__}: {err}; record content withheld",
        )
