"""Error and skip records: a failed scorer call as a ``ScoreFailure`` that keeps the work already done,
a skipped one (``SkipRun``) as a ``ScoreSkipped``."""

from __future__ import annotations

from typing import Any, Protocol

from agentevals._model._errors import ScorerError, ScorerSkipped, SkipRun
from agentevals._model._result import JudgeCall, ScoreFailure, ScoreSkipped, Source, run_fields


class ScorerIdentity(Protocol):
    """What a record needs to know of its scorer (a :class:`~agentevals.Scorer` is one)."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...


def _identity(scorer: ScorerIdentity) -> dict[str, Any]:
    return {"scorer_id": scorer.id, "scorer_name": scorer.name, "scorer_version": scorer.version}


def failure_record(
    *,
    scorer: ScorerIdentity,
    run: Any,
    error: BaseException,
    source: Source = "eval",
    duration_ms: float = 0.0,
    failed_step: str | None = None,
) -> ScoreFailure:
    """An error record for ``run`` (a ``Run``) from any exception; keeps a ``ScorerError``'s partial work."""
    cause: BaseException = error
    completed: dict[str, Any] = {}
    prompts: dict[str, str] = {}
    replies: dict[str, str] = {}
    calls: list[JudgeCall] = []
    flags: tuple[str, ...] = ()
    if isinstance(error, ScorerError):
        flags = error.judge_input_flags
        completed, prompts, replies, calls, failed_step = (
            error.completed,
            error.prompts,
            error.replies,
            error.judge_calls,
            error.step,
        )
        cause = error.__cause__ or error
    return ScoreFailure(
        **_identity(scorer),
        **run_fields(run),
        preprocess_step_result=completed.get("preprocess"),
        analyze_step_result=completed.get("analyze"),
        preprocess_prompt=prompts.get("preprocess"),
        analyze_prompt=prompts.get("analyze"),
        generate_score_prompt=prompts.get("generate_score"),
        generate_reason_prompt=prompts.get("generate_reason"),
        judge_replies=replies,
        judge_calls=calls,
        duration_ms=duration_ms,
        source=source,
        error_type=type(cause).__name__,
        error_message=str(cause) or type(cause).__name__,
        failed_step=failed_step,
        judge_input_flags=flags,
    )


def skipped_record(
    *,
    scorer: ScorerIdentity,
    run: Any,
    skip_reason: str,
    reason: str,
    source: Source = "eval",
    duration_ms: float = 0.0,
    skipped_step: str | None = None,
) -> ScoreSkipped:
    """A skipped record for ``run`` (a ``Run``): no score, ``skip_reason`` a short code, ``reason`` text."""
    return ScoreSkipped(
        **_identity(scorer),
        **run_fields(run),
        skip_reason=skip_reason,
        reason=reason,
        skipped_step=skipped_step,
        duration_ms=duration_ms,
        source=source,
    )


def error_record(
    *,
    scorer: ScorerIdentity,
    run: Any,
    error: BaseException,
    source: Source = "eval",
    duration_ms: float = 0.0,
) -> ScoreFailure | ScoreSkipped:
    """The record of a scorer call that raised ``error``: skipped when a step skipped the run
    (``ScorerSkipped`` / ``SkipRun``), else an error record (:func:`failure_record`)."""
    if isinstance(error, SkipRun):
        return skipped_record(
            scorer=scorer,
            run=run,
            skip_reason=error.reason,
            reason=error.message,
            source=source,
            duration_ms=duration_ms,
        )
    if isinstance(error, ScorerSkipped):  # keeps the work done before the skip, judge calls included
        return ScoreSkipped(
            **_identity(scorer),
            **run_fields(run),
            skip_reason=error.skip_reason,
            reason=error.message,
            skipped_step=error.step,
            preprocess_step_result=error.completed.get("preprocess"),
            analyze_step_result=error.completed.get("analyze"),
            judge_replies=error.replies,
            judge_calls=error.judge_calls,
            duration_ms=duration_ms,
            source=source,
            judge_input_flags=error.judge_input_flags,
        )
    return failure_record(
        scorer=scorer,
        run=run,
        error=error,
        source=source,
        duration_ms=duration_ms,
    )
