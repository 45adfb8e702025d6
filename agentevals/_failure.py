"""Error and skip records: a failed scorer call as a ``ScoreFailure`` that keeps the work already done,
a skipped one (``SkipRun``) as a ``ScoreSkipped``."""

from __future__ import annotations

from typing import Any

from agentevals._errors import ScorerError, ScorerSkipped
from agentevals._result import JudgeCall, ScoreFailure, ScoreSkipped, Source, run_fields
from agentevals._steps import SkipRun


def failure_record(
    *,
    scorer_id: str,
    scorer_name: str,
    run: Any,
    error: BaseException,
    source: Source = "test",
    scorer_version: str | None = None,
    duration_ms: float = 0.0,
    failed_step: str | None = None,
) -> ScoreFailure:
    """An error record for ``run`` (a ``Run``) from any exception; keeps a ``ScorerError``'s partial work."""
    cause: BaseException = error
    completed: dict[str, Any] = {}
    prompts: dict[str, str] = {}
    calls: list[JudgeCall] = []
    if isinstance(error, ScorerError):
        completed, prompts, calls, failed_step = (
            error.completed,
            error.prompts,
            error.judge_calls,
            error.step,
        )
        cause = error.__cause__ or error
    return ScoreFailure(
        scorer_id=scorer_id,
        scorer_name=scorer_name,
        scorer_version=scorer_version,
        **run_fields(run),
        preprocess_step_result=completed.get("preprocess"),
        analyze_step_result=completed.get("analyze"),
        preprocess_prompt=prompts.get("preprocess"),
        analyze_prompt=prompts.get("analyze"),
        generate_score_prompt=prompts.get("generate_score"),
        generate_reason_prompt=prompts.get("generate_reason"),
        judge_calls=calls,
        duration_ms=duration_ms,
        source=source,
        error_type=type(cause).__name__,
        error_message=str(cause) or type(cause).__name__,
        failed_step=failed_step,
    )


def skipped_record(
    *,
    scorer_id: str,
    scorer_name: str,
    run: Any,
    skip_reason: str,
    reason: str,
    source: Source = "test",
    scorer_version: str | None = None,
    duration_ms: float = 0.0,
    skipped_step: str | None = None,
) -> ScoreSkipped:
    """A skipped record for ``run`` (a ``Run``): no score, ``skip_reason`` a short code, ``reason`` text."""
    return ScoreSkipped(
        scorer_id=scorer_id,
        scorer_name=scorer_name,
        scorer_version=scorer_version,
        **run_fields(run),
        skip_reason=skip_reason,
        reason=reason,
        skipped_step=skipped_step,
        duration_ms=duration_ms,
        source=source,
    )


def error_record(
    *,
    scorer_id: str,
    scorer_name: str,
    run: Any,
    error: BaseException,
    source: Source = "test",
    scorer_version: str | None = None,
    duration_ms: float = 0.0,
) -> ScoreFailure | ScoreSkipped:
    """The record of a scorer call that raised ``error``: skipped when a step skipped the run
    (``ScorerSkipped`` / ``SkipRun``), else an error record (:func:`failure_record`)."""
    if isinstance(error, SkipRun):
        return skipped_record(
            scorer_id=scorer_id,
            scorer_name=scorer_name,
            scorer_version=scorer_version,
            run=run,
            skip_reason=error.reason,
            reason=error.message,
            source=source,
            duration_ms=duration_ms,
        )
    if isinstance(error, ScorerSkipped):  # keeps the work done before the skip, judge calls included
        return ScoreSkipped(
            scorer_id=scorer_id,
            scorer_name=scorer_name,
            scorer_version=scorer_version,
            **run_fields(run),
            skip_reason=error.skip_reason,
            reason=error.message,
            skipped_step=error.step,
            preprocess_step_result=error.completed.get("preprocess"),
            analyze_step_result=error.completed.get("analyze"),
            judge_calls=error.judge_calls,
            duration_ms=duration_ms,
            source=source,
        )
    return failure_record(
        scorer_id=scorer_id,
        scorer_name=scorer_name,
        scorer_version=scorer_version,
        run=run,
        error=error,
        source=source,
        duration_ms=duration_ms,
    )
