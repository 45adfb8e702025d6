"""The reads of a labelling session and of a canary, on SQLite and PostgreSQL: the scores to pick runs
from, a run's latest record, the runs a labeller labelled, the stored thresholds, canary epochs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from trust_stores import write

from agentevals import ScoreResult
from agentevals._model._thresholds import Threshold
from agentevals._store import _label_reads
from agentevals._store._catalog_tables import ScorerInfo
from agentevals._store._store import open_store
from agentevals.evals import Labels
from agentevals.results import ScoreFailure

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _result(run_id: str, scorer: str, score: float, *, minutes: int = 0, **fields: object) -> ScoreResult:
    return ScoreResult(
        scorer_id=scorer,
        scorer_name=scorer,
        run_id=run_id,
        score=score,
        created_at=T0 + timedelta(minutes=minutes),
        **fields,
    )


async def test_the_scores_to_pick_from_are_of_the_scorer_or_of_every_scorer_on_its_runs(
    store: tuple[str, str],
) -> None:
    address, table = store
    failure = ScoreFailure(
        scorer_id="helpfulness", scorer_name="h", run_id="r3", error_type="E", error_message="boom"
    )
    await write(
        address,
        table,
        [_result("r1", "helpfulness", 0.4), _result("r1", "tone", 0.9), _result("r2", "tone", 0.1), failure],
    )
    with open_store(address, table=table) as opened:
        q = opened.reading
        own = _label_reads.scores_to_pick_from(q, "helpfulness", every_scorer=False)
        every = _label_reads.scores_to_pick_from(q, "helpfulness", every_scorer=True)
    assert [row[:3] for row in own] == [("r1", "helpfulness", 0.4)]
    assert sorted(row[:3] for row in every) == [("r1", "helpfulness", 0.4), ("r1", "tone", 0.9)]


async def test_a_runs_latest_record_and_the_runs_a_labeller_labelled(store: tuple[str, str]) -> None:
    address, table = store
    await write(
        address,
        table,
        [
            _result("r1", "helpfulness", 0.2, scorer_version="v1", reason="old"),
            _result("r1", "helpfulness", 0.8, minutes=5, scorer_version="v2", reason="new", source="rescore"),
        ],
    )
    with Labels(address, table=table) as labels:
        labels.add("r1", "helpfulness", "pass", labeller="ann")
        labels.add("r2", "helpfulness", "fail", labeller="bob")
        labels.add("r3", "tone", "fail", labeller="ann")
    with open_store(address, table=table) as opened:
        q = opened.reading
        latest = _label_reads.latest_record(q, "r1", "helpfulness")
        assert _label_reads.latest_record(q, "r2", "helpfulness") is None
        assert _label_reads.labelled_by(q, "helpfulness", "ann") == {"r1"}
    assert latest is not None
    assert {k: latest[k] for k in ("scorer_version", "outcome", "score", "reason", "source")} == {
        "scorer_version": "v2",
        "outcome": "scored",
        "score": 0.8,
        "reason": "new",
        "source": "rescore",
    }


async def test_each_scorers_newest_declared_threshold_is_stored(store: tuple[str, str]) -> None:
    address, table = store
    await write(
        address,
        table,
        [_result("r1", "helpfulness", 0.5)],
        scorers=[
            ScorerInfo("helpfulness", "h", "v1", "live", threshold_min=0.7),
            ScorerInfo("tone", "t", "v1", "live", threshold_max=0.3),
            ScorerInfo(
                "tone", "t", "v1", "live", step="analyze", threshold_min=0.9
            ),  # a step's: not the scorer's
            ScorerInfo("plain", "p", "v1", "live"),
        ],
    )
    with open_store(address, table=table) as opened:
        found = _label_reads.stored_thresholds(opened.reading)
    assert found == {"helpfulness": Threshold(min=0.7), "tone": Threshold(max=0.3)}


async def test_the_newest_canary_epoch_and_its_records(store: tuple[str, str]) -> None:
    address, table = store
    epochs = [("canary-a", 0), ("canary-b", 10)]
    await write(
        address,
        table,
        [_result("r1", "helpfulness", 0.9, source="live")]
        + [
            _result(run_id, "helpfulness", 0.5, minutes=minutes, source="canary", eval_id=epoch)
            for epoch, minutes in epochs
            for run_id in ("r1", "r2")
        ],
    )
    with open_store(address, table=table) as opened:
        q = opened.reading
        assert _label_reads.latest_canary_epoch(q, "helpfulness") == "canary-b"
        assert _label_reads.latest_canary_epoch(q, "tone") is None
        rows = _label_reads.epoch_records(q, "helpfulness", "canary-a")
    assert [(row[0], row[2], row[3]) for row in rows] == [("r1", "scored", 0.5), ("r2", "scored", 0.5)]
