"""The exception hierarchy.

    AgentEvalsError                 base of everything raised by agentevals
    ├── ScorerError                 a scorer step failed (names the scorer and the step; the cause is chained)
    │   └── ScorerSkipped           a step skipped the run: a required input is absent (``SkipRun``)
    ├── RunBuildError               an integration could not build the Run of a finished agent run
    └── JudgeError                  an LLM judge call failed after its retries (carries the attempt count)
        └── JudgeOutputError        the judge replied, but not with valid JSON for the step's schema

Invalid configuration raises the standard ``ValueError`` / ``TypeError`` at construction, with a message
that says how to fix it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentevals._model._result import JudgeCall


class AgentEvalsError(Exception):
    """Base class for errors raised by agentevals."""


class JudgeError(AgentEvalsError):
    """An LLM judge call failed: a non-retryable error, or every attempt failed."""

    def __init__(self, message: str, *, model: str, attempts: int, call: JudgeCall | None = None) -> None:
        super().__init__(message)
        self.model = model
        self.attempts = attempts
        self.call = call


class JudgeOutputError(JudgeError):
    """The judge's reply could not be parsed or validated against the step's output schema."""

    def __init__(
        self,
        message: str,
        *,
        model: str,
        attempts: int,
        raw_output: str | None,
        call: JudgeCall | None = None,
    ) -> None:
        super().__init__(message, model=model, attempts=attempts, call=call)
        self.raw_output = raw_output


class ScorerError(AgentEvalsError):
    """A scorer step failed. ``__cause__`` holds the original exception.

    ``completed`` maps the steps that finished before the failure to their results, ``prompts`` and
    ``judge_calls`` hold what was sent to judges so far and ``replies`` the reply texts received (an
    unparseable one included): a failure keeps the work already done. ``judge_input_flags`` are what the
    run's output held that tries to steer a judge (see ``ScoreResult.judge_input_flags``).
    """

    def __init__(
        self,
        scorer_id: str,
        step: str,
        message: str,
        *,
        completed: dict[str, Any] | None = None,
        prompts: dict[str, str] | None = None,
        judge_calls: list[JudgeCall] | None = None,
        replies: dict[str, str] | None = None,
        judge_input_flags: tuple[str, ...] = (),
    ) -> None:
        super().__init__(f"scorer {scorer_id!r} failed in step {step!r}: {message}")
        self.scorer_id = scorer_id
        self.step = step
        self.completed = dict(completed or {})
        self.prompts = dict(prompts or {})
        self.judge_calls = list(judge_calls or [])
        self.replies = dict(replies or {})
        self.judge_input_flags = judge_input_flags


class ScorerSkipped(ScorerError):
    """A step raised :class:`~agentevals.steps.SkipRun`: the run lacks an input the scorer needs (ground
    truth, context...). Not a failure: the engine and ``run_evals`` turn it into a skipped record.

    ``skip_reason`` is the machine-readable reason (``"no_ground_truth"``), ``message`` the readable one.
    """

    def __init__(
        self,
        scorer_id: str,
        step: str,
        message: str,
        *,
        skip_reason: str,
        completed: dict[str, Any] | None = None,
        prompts: dict[str, str] | None = None,
        judge_calls: list[JudgeCall] | None = None,
        replies: dict[str, str] | None = None,
        judge_input_flags: tuple[str, ...] = (),
    ) -> None:
        super().__init__(
            scorer_id,
            step,
            message,
            completed=completed,
            prompts=prompts,
            judge_calls=judge_calls,
            replies=replies,
            judge_input_flags=judge_input_flags,
        )
        self.args = (f"scorer {scorer_id!r} skipped the run in step {step!r}: {message}",)
        self.message = message
        self.skip_reason = skip_reason


class RunBuildError(AgentEvalsError):
    """An integration captured a run but could not build its ``Run`` (a capture bug; please report it).

    The engine turns it into one error record per sampled scorer, so the run is not lost silently.
    """


class SkipRun(AgentEvalsError):
    """Raise from a step when the run lacks an input the scorer needs: the run is *skipped*, not failed.

    ``message`` says what is missing (it becomes the record's ``reason``); ``reason`` is a short
    machine-readable code (the record's ``skip_reason``), e.g. ``"no_ground_truth"``, ``"no_context"``.
    Live scoring writes a skipped record and counts it per scorer (``stats().skipped_by_scorer``);
    ``run_evals`` counts it in the scorer's ``skipped``, outside its mean and its errors. Called
    directly, :meth:`Scorer.run` raises :class:`~agentevals.errors.ScorerSkipped`.

    >>> from agentevals import create_scorer
    >>> def exact(run, **_):
    ...     if run.ground_truth is None:
    ...         raise SkipRun("the run has no ground truth", reason="no_ground_truth")
    ...     return float(run.output_text == run.ground_truth)
    >>> scorer = create_scorer(id="exact").generate_score(exact)
    >>> scorer.run_sync(input="2+2?", output="4", ground_truth="4").score
    1.0
    """

    def __init__(self, message: str, *, reason: str) -> None:
        if not isinstance(reason, str) or not reason:
            raise ValueError(
                f"SkipRun needs a short reason code, e.g. reason='no_ground_truth'; got {reason!r}"
            )
        super().__init__(message)
        self.message = message
        self.reason = reason
