"""One scorer call as the engine makes it: timed out, failures as records, marked live, redacted."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
import traceback
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any

from agentevals._model._failure import error_record, skipped_record
from agentevals._model._redact import redact_text
from agentevals._model._result import ScoreFailure, ScoreRecord, ScoreResult, ScoreSkipped
from agentevals._model._run import Run
from agentevals._scoring._judge._litellm import imported
from agentevals._scoring._scorer import Scorer
from agentevals._support._sync import really_cancelled
from agentevals._support._throttle import Throttle

Redactor = Callable[[ScoreRecord], ScoreRecord]
logger = logging.getLogger("agentevals.engine")


class FailureLog:
    """Live scorer failures in the log, not only in the sinks: the first failure of each (scorer,
    error type) at WARNING with its traceback, then a count per scorer at most once per ``interval``.
    Error text goes through the engine's ``redact`` first (it may echo the run's content)."""

    def __init__(self, redact: Redactor | None = None, interval: float = 60.0) -> None:
        self.redact = redact
        self.interval = interval
        self._throttle = Throttle(interval)

    def note(self, record: ScoreFailure, error: BaseException) -> None:
        first, counts = self._throttle.note(record.scorer_id, record.error_type)
        message = redact_text(self.redact, record.error_message)
        if first:
            trace = redact_text(self.redact, "".join(traceback.format_exception(error)).rstrip())
            logger.warning(
                "agentevals: scorer %r failed on run %s: %s: %s (its error record is in the sinks; the "
                "first failure of each kind is logged with its traceback, then a count at most every "
                "%.0f s)\n%s",
                record.scorer_id,
                record.run_id,
                record.error_type,
                message,
                self.interval,
                trace,
            )
        elif counts is not None:
            kinds = ", ".join(f"{kind} ×{n}" for kind, n in counts.most_common())
            logger.warning(
                "agentevals: scorer %r failed %d time(s) since the last report (%s); last: %s: %s",
                record.scorer_id,
                counts.total(),
                kinds,
                record.error_type,
                message,
            )


async def score_once(
    run: Run, scorer: Scorer, timeout: float | None, concurrency: asyncio.Semaphore, failures: FailureLog
) -> ScoreRecord:
    """The scorer's result, a ``ScoreSkipped`` when a step skips the run, or a ``ScoreFailure`` when it
    raises or exceeds ``timeout`` seconds."""
    if scorer.has_judge:
        await imported()
    async with concurrency:
        return await _guarded(
            scorer.score(run, source="live"), run, scorer, timeout, time.perf_counter(), failures
        )


def score_inline(
    run: Run, scorer: Scorer, timeout: float | None, failures: FailureLog
) -> ScoreRecord | asyncio.Task[ScoreRecord]:
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
        return _failure(run, scorer, err, started, failures)
    rest = _guarded(_Resumed(call, waiting_on), run, scorer, timeout, started, failures)
    return asyncio.get_running_loop().create_task(rest, context=context)


async def _guarded(
    call: Awaitable[ScoreResult],
    run: Run,
    scorer: Scorer,
    timeout: float | None,
    started: float,
    failures: FailureLog,
) -> ScoreRecord:
    try:
        async with asyncio.timeout(timeout):
            return await call
    except TimeoutError:
        error: BaseException = TimeoutError(
            f"scorer {scorer.id!r} did not finish within {timeout} s (raise the ScorerEntry "
            "timeout or the engine's ScoringOptions.timeout if it needs longer)"
        )
    except BaseException as err:  # scorer errors become data and never escape (SystemExit too)
        if really_cancelled(err):  # the engine's own task is being cancelled: let it
            raise
        error = err
    return _failure(run, scorer, error, started, failures)


def _failure(
    run: Run, scorer: Scorer, error: BaseException, started: float, failures: FailureLog
) -> ScoreFailure | ScoreSkipped:
    record = error_record(
        scorer=scorer,
        run=run,
        error=error,
        source="live",
        duration_ms=(time.perf_counter() - started) * 1000,
    )
    if isinstance(record, ScoreFailure):
        failures.note(record, error)
    return record


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
            scorer_version=record.scorer_version,
            run_id=record.run_id,
            trace_id=record.trace_id,
            entity=record.entity,
            source="live",
            duration_ms=record.duration_ms,
            error_type="RedactionError",
            error_message=f"redact raised {type(err).__name__}: {err}; record content withheld",
        )


def run_failed_record(run: Run, scorer: Scorer) -> ScoreSkipped:
    """The skipped record (``run_failed``) a scorer that does not score failed runs gets for ``run``."""
    return skipped_record(
        scorer=scorer,
        run=run,
        skip_reason="run_failed",
        reason=f"the run failed ({run.error}); this scorer scores only runs that succeed "
        "(ScorerEntry(score_errors=True) scores failed runs too)",
        source="live",
    )
