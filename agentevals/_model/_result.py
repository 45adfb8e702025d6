"""Score records: what a scorer produced for a run (``ScoreResult``), why it failed (``ScoreFailure``), or
why it did not score it (``ScoreSkipped``). Each says which in ``outcome``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, computed_field


def utc_now() -> datetime:
    return datetime.now(UTC)


class JudgeCall(BaseModel):
    """One LLM judge call (all its attempts), with token usage and cost when the provider reports them."""

    model_config = ConfigDict(frozen=True)

    step: str
    model: str
    attempts: int = 1
    duration_ms: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    ok: bool = True
    error: str | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


#: Where a record comes from: live scoring, an evaluation (``run_evals``, ``scorer.run``), re-scoring
#: stored runs, or a canary epoch re-judging labelled runs (``agentevals canary``).
Source = Literal["live", "eval", "rescore", "canary"]
#: The sources a record can have, in that order.
SOURCES: tuple[Source, ...] = get_args(Source)


class _ScoreRecord(BaseModel):
    """Fields shared by results and failures."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    scorer_id: str
    scorer_name: str
    run_id: str
    #: The scorer's :attr:`~agentevals.Scorer.version` (``None`` in a record built without one).
    scorer_version: str | None = None
    trace_id: str | None = None
    entity: str | None = None
    #: The evaluation that produced the record (``run_evals``); ``None`` for live scoring.
    eval_id: str | None = None
    input: Any = None
    output: Any = None
    ground_truth: Any = None
    request_context: dict[str, Any] = Field(default_factory=dict)
    #: The run's retrieved context, error, duration and start: stored once per run (``agentevals_runs``).
    context: list[str] = Field(default_factory=list)
    run_error: str | None = None
    run_duration_ms: float | None = None
    run_started_at: datetime | None = None
    preprocess_step_result: Any = None
    analyze_step_result: Any = None
    generate_score_step_result: Any = None
    preprocess_prompt: str | None = None
    analyze_prompt: str | None = None
    generate_score_prompt: str | None = None
    generate_reason_prompt: str | None = None
    #: Each judged step's reply text as received (secrets masked; very long replies cut with a marker).
    judge_replies: dict[str, str] = Field(default_factory=dict)
    step_durations_ms: dict[str, float] = Field(default_factory=dict)
    duration_ms: float = 0.0
    judge_calls: list[JudgeCall] = Field(default_factory=list)
    source: Source = "eval"
    metadata: dict[str, Any] = Field(default_factory=dict)
    created_at: datetime = Field(default_factory=utc_now)
    #: Paths of values replaced so the record could be stored (``"request_context.loop"``, ``"reason"``):
    #: circular or too deep containers, non-UTF-8 bytes, unrepresentable objects, lone surrogates.
    #: Stored rows carry it in ``metadata["agentevals_sanitized"]``.
    sanitized: tuple[str, ...] = ()
    #: What a scorer that calls a judge found in the run's output trying to steer that judge:
    #: ``"verdict_json"`` (an object with a judge reply's keys), ``"judge_address"`` (words to the judge:
    #: "ignore previous instructions", "score this 1.0"), ``"marker_like"`` (an imitated data block
    #: boundary). The output reached the judge inside a data block all the same; ``()`` when none.
    #: Stored rows carry it in ``metadata["agentevals_judge_input_flags"]``.
    judge_input_flags: tuple[str, ...] = ()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def judge_model(self) -> str | None:
        """The model of the first judge call, if any."""
        return self.judge_calls[0].model if self.judge_calls else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.judge_calls)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def completion_tokens(self) -> int:
        return sum(c.completion_tokens for c in self.judge_calls)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def cost_usd(self) -> float | None:
        """Total judge cost in USD; ``None`` when no call reported a cost."""
        costs = [c.cost_usd for c in self.judge_calls if c.cost_usd is not None]
        return sum(costs) if costs else None


Outcome = Literal["scored", "failed", "skipped"]


class ScoreResult(_ScoreRecord):
    """A scorer's result for one run: the score, the reason, every step's result and every prompt sent."""

    score: float
    reason: str | None = None
    #: The score as the scorer returned it on its declared ``score_range``, before ``score`` was rescaled
    #: to [0, 1]; ``None`` for a scorer of the default range [0, 1].
    raw_score: float | None = None

    @property
    def ok(self) -> bool:
        return True

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcome(self) -> Literal["scored"]:
        return "scored"


class ScoreFailure(_ScoreRecord):
    """An error record: a scorer failed (or timed out) on a run. Sinks store it like a result."""

    error_type: str
    error_message: str
    failed_step: str | None = None
    score: None = None
    reason: None = None

    @property
    def ok(self) -> bool:
        return False

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcome(self) -> Literal["failed"]:
        return "failed"


class ScoreSkipped(_ScoreRecord):
    """A scorer did not score a run: an input it needs is absent (a step raised
    :class:`~agentevals.steps.SkipRun`), or the run failed and the scorer does not score failed runs.

    Not an error (``ok`` is true, it is counted as skipped, not failed), and there is no score.
    ``skip_reason`` is a short code (``"no_ground_truth"``, ``"no_context"``, ``"run_failed"``),
    ``reason`` the readable explanation, ``skipped_step`` the step that skipped (``None``: the engine).
    Stored rows have ``outcome = 'skipped'`` and ``skip_reason`` columns.
    """

    skip_reason: str
    reason: str
    skipped_step: str | None = None
    score: None = None

    @property
    def ok(self) -> bool:
        return True

    @computed_field  # type: ignore[prop-decorator]
    @property
    def outcome(self) -> Literal["skipped"]:
        return "skipped"


ScoreRecord = ScoreResult | ScoreFailure | ScoreSkipped


def run_fields(run: Any) -> dict[str, Any]:
    """The fields a record copies from its run (a ``Run``)."""
    return {
        "run_id": run.run_id,
        "trace_id": run.trace_id,
        "entity": run.entity,
        "input": run.input,
        "output": run.output,
        "ground_truth": run.ground_truth,
        "request_context": run.request_context,
        "context": run.context,
        "run_error": run.error,
        "run_duration_ms": run.duration_ms,
        "run_started_at": run.started_at,
        "metadata": dict(run.metadata) if run.metadata else {},
    }
