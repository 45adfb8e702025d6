"""One scorer call as the engine makes it: timed out, failures as records, marked live, redacted."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from agentevals._result import ScoreFailure, ScoreRecord, ScoreResult, failure_record
from agentevals._run import Run
from agentevals._scorer import Scorer

Redactor = Callable[[ScoreRecord], ScoreRecord]


async def score_once(
    run: Run, scorer: Scorer, timeout: float | None, concurrency: asyncio.Semaphore
) -> ScoreRecord:
    """The scorer's result, or a ``ScoreFailure`` when it raises or exceeds ``timeout`` seconds."""
    async with concurrency:
        started = time.perf_counter()
        try:
            async with asyncio.timeout(timeout):
                return await scorer.run(run)
        except TimeoutError:
            error: BaseException = TimeoutError(
                f"scorer {scorer.id!r} did not finish within {timeout} s (raise the ScorerEntry "
                "timeout or the engine's scorer_timeout if it needs longer)"
            )
        except asyncio.CancelledError:
            raise
        except BaseException as err:  # scorer errors become data and never escape
            error = err
        return failure_record(
            scorer_id=scorer.id,
            scorer_name=scorer.name,
            run=run,
            error=error,
            source="live",
            duration_ms=(time.perf_counter() - started) * 1000,
        )


def as_live(record: ScoreRecord, entity: str | None, redact: Redactor | None) -> ScoreRecord:
    """Mark ``record`` live with its entity, then redact it; a failing redactor withholds the content."""
    record = record.model_copy(update={"source": "live", "entity": entity})
    if redact is None:
        return record
    try:
        redacted = redact(record)
        if not isinstance(redacted, ScoreResult | ScoreFailure):
            raise TypeError(f"redact must return a ScoreRecord, got {type(redacted).__name__}")
        return redacted
    except Exception as err:
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
