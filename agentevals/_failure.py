"""Error records: a failed scorer call as a ``ScoreFailure`` that keeps the work already done."""

from __future__ import annotations

from typing import Any, Literal

from agentevals._errors import ScorerError
from agentevals._result import JudgeCall, ScoreFailure, run_fields


def failure_record(
    *,
    scorer_id: str,
    scorer_name: str,
    run: Any,
    error: BaseException,
    source: Literal["live", "test"] = "test",
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
