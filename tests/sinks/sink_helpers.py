"""Records shared by the sink tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pydantic import BaseModel

from agentevals import Message, Run, ScoreRecord, ScoreResult, create_scorer
from agentevals._model._failure import failure_record
from agentevals.results import JudgeCall, ScoreFailure


class Verdicts(BaseModel):
    verdicts: list[str]


def sample_records(n: int = 3) -> list[ScoreRecord]:
    """``n`` results with every column filled, then one failure."""
    base = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    records: list[ScoreRecord] = [
        ScoreResult(
            scorer_id="relevancy",
            scorer_name="Answer relevancy",
            run_id=f"run-{i}",
            trace_id=f"trace-{i}",
            entity="support-bot",
            source="live",
            score=i / 10,
            reason=f"reason {i} — ünïcode",
            input={"question": f"q{i}"},
            output=[Message(role="assistant", content=f"a{i}")],
            ground_truth="truth",
            request_context={"user": "u1"},
            preprocess_step_result={"statements": ["s1", "s2"]},
            analyze_step_result=Verdicts(verdicts=["yes", "no"]),
            generate_score_step_result={"score": i / 10},
            preprocess_prompt="pre prompt",
            analyze_prompt="analyze prompt",
            generate_score_prompt=None,
            generate_reason_prompt="reason prompt",
            judge_calls=[
                JudgeCall(
                    step="analyze",
                    model="openai/gpt-4o-mini",
                    prompt_tokens=10,
                    completion_tokens=5,
                    cost_usd=0.001,
                ),
                JudgeCall(
                    step="generate_reason",
                    model="openai/gpt-4o-mini",
                    prompt_tokens=7,
                    completion_tokens=3,
                    cost_usd=0.002,
                ),
            ],
            duration_ms=12.5,
            metadata={"version": 2, "nan": float("nan")},
            created_at=base + timedelta(seconds=i),
        )
        for i in range(n)
    ]
    failure = failure_record(
        scorer=create_scorer(id="toxicity", name="Toxicity"),
        run=Run(run_id="run-failed", input="q", output="a"),
        error=TimeoutError("took too long"),
        source="live",
        duration_ms=100.0,
    )
    assert isinstance(failure, ScoreFailure)
    return [*records, failure]
