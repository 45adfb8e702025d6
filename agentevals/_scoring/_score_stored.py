"""Scoring a stored run again, outside the engine (``rescore``, ``canary``): a record whatever happens."""

from __future__ import annotations

import time

from agentevals._model._failure import error_record, skipped_record
from agentevals._model._result import ScoreRecord, Source
from agentevals._model._run import Run
from agentevals._scoring._scorer import Scorer


async def score_stored(scorer: Scorer, run: Run, *, source: Source, only_succeeded: str) -> ScoreRecord:
    """The record of ``scorer`` on ``run``: its result, an error record when the scorer raises, or a
    skipped record when a step skips the run or the run itself failed (``run_failed``; its reason ends
    with ``only_succeeded``, e.g. "re-scoring scores only runs that succeeded")."""
    if run.error is not None:
        return skipped_record(
            scorer=scorer,
            run=run,
            skip_reason="run_failed",
            reason=f"the run failed ({run.error}); {only_succeeded}",
            source=source,
        )
    started = time.perf_counter()
    try:
        return await scorer.score(run, source=source)
    except Exception as err:  # a skip (``SkipRun``) becomes a skipped record, the rest error records
        duration_ms = (time.perf_counter() - started) * 1000
        return error_record(scorer=scorer, run=run, error=err, source=source, duration_ms=duration_ms)
