"""A small store for the report tests, written through ``SQLiteSink``/``PostgresSink`` with fixed times:
two scorers over twelve runs, one of them with a stored pass threshold."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from agentevals import ScoreResult
from agentevals._store._catalog_tables import ScorerInfo
from agentevals.results import ScoreFailure

START = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
#: Per run, the judge's score of ``helpfulness`` (version ``v2``); run 11 errored.
JUDGE_SCORES = [0.9, 0.8, 0.2, 0.7, 0.1, 0.95, 0.3, 0.6, 0.4, 0.85, 0.75]


def records(scores: Sequence[float] = JUDGE_SCORES) -> list[ScoreResult | ScoreFailure]:
    """Score records of ``helpfulness`` v2 (one per run ``r0``.., then one error) and of ``exact_match``."""
    out: list[ScoreResult | ScoreFailure] = []
    for n, score in enumerate(scores):
        moment = START + timedelta(hours=n)
        common = {"run_id": f"r{n}", "created_at": moment, "source": "live", "entity": "support-agent"}
        out.append(
            ScoreResult(
                scorer_id="helpfulness", scorer_name="Helpfulness", scorer_version="v2", score=score, **common
            )
        )
        out.append(
            ScoreResult(
                scorer_id="exact_match",
                scorer_name="Exact match",
                scorer_version="1",
                score=float(n % 2),
                **common,
            )
        )
    out.append(
        ScoreFailure(
            scorer_id="helpfulness",
            scorer_name="Helpfulness",
            scorer_version="v2",
            run_id=f"r{len(scores)}",
            created_at=START + timedelta(hours=len(scores)),
            source="live",
            entity="support-agent",
            error_type="TimeoutError",
            error_message="judge timed out",
            failed_step="generate_score",
        )
    )
    return out


#: The pass threshold stored for ``helpfulness`` (``exact_match`` has none stored).
SCORERS = [ScorerInfo("helpfulness", "Helpfulness", "v2", "live", threshold_min=0.5)]


async def write_store(sink: Any, scores: Sequence[float] = JUDGE_SCORES) -> None:
    """Write the records and the scorers' catalog rows through ``sink`` and close it."""
    try:
        await sink.write(records(scores))
        await sink.write_scorers(SCORERS)
    finally:
        await sink.close()
