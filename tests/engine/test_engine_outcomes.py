"""Outcomes of live scoring: scored, failed and skipped records, counted apart and stored apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import accounted

from agentevals import Run, ScoringEngine, create_scorer
from agentevals._store._row import record_from_json, record_to_json, record_to_row
from agentevals.engine import DeliveryOptions
from agentevals.errors import ScorerError, ScorerSkipped
from agentevals.results import ScoreFailure, ScoreResult, ScoreSkipped
from agentevals.scorers import create_exact_match_scorer
from agentevals.sinks import MemorySink
from agentevals.steps import SkipRun


def _needs_context(run: Run, **_: object) -> float:
    if not run.context:
        raise SkipRun("no retrieved context to check against", reason="no_context")
    return 1.0


def test_a_missing_ground_truth_is_a_skipped_record_not_an_error(dead_letter: Path) -> None:
    memory = MemorySink()
    exact = create_exact_match_scorer()
    custom = create_scorer(id="grounded").analyze(_needs_context).generate_score(lambda **_: 1.0)
    engine = ScoringEngine([exact, custom], sinks=[memory], delivery=DeliveryOptions(dead_letter=dead_letter))
    engine.submit(Run(run_id="live", input="2+2?", output="4"))  # live traffic: no ground truth
    engine.submit(Run(run_id="labelled", input="2+2?", output="4", ground_truth="4", context=["4"]))
    report = engine.shutdown()

    by = {(r.run_id, r.scorer_id): r for r in memory.records}
    skipped = by[("live", "exact_match")]
    assert isinstance(skipped, ScoreSkipped) and skipped.outcome == "skipped" and skipped.ok
    assert skipped.skip_reason == "no_ground_truth" and "ground_truth" in skipped.reason
    assert skipped.score is None and skipped.source == "live" and skipped.skipped_step == "analyze"
    assert by[("live", "grounded")].outcome == "skipped"
    assert by[("live", "grounded")].skip_reason == "no_context"  # type: ignore[union-attr]
    assert [by[("labelled", s)].outcome for s in ("exact_match", "grounded")] == ["scored", "scored"]
    assert not any(isinstance(r, ScoreFailure) for r in memory.records)

    stats = accounted(engine)
    assert (stats.scored, stats.failed, stats.skipped, stats.records) == (2, 0, 2, 4)
    assert stats.skipped_by_scorer == {"exact_match": 1, "grounded": 1}
    assert (report.scored, report.failed, report.skipped, report.written) == (2, 0, 2, 4) and report


def test_outcome_on_every_record_and_in_stored_rows() -> None:
    skipped = ScoreSkipped(
        scorer_id="s", scorer_name="s", run_id="r", skip_reason="no_ground_truth", reason="no ground truth"
    )
    result = ScoreResult(scorer_id="s", scorer_name="s", run_id="r", score=1.0)
    failure = ScoreFailure(scorer_id="s", scorer_name="s", run_id="r", error_type="E", error_message="m")
    assert (result.outcome, failure.outcome) == ("scored", "failed")
    row = record_to_row(skipped)
    assert row["score"] is None and row["error_type"] is None and row["reason"] == "no ground truth"
    assert (row["outcome"], row["skip_reason"], row["metadata"]) == ("skipped", "no_ground_truth", "{}")
    assert (record_to_row(result)["outcome"], record_to_row(failure)["outcome"]) == ("scored", "failed")
    assert record_to_row(result)["metadata"] == "{}"
    data = record_to_json(skipped)
    assert data["outcome"] == "skipped" and record_from_json(data) == skipped


def test_a_scorer_called_directly_raises_scorer_skipped_a_scorer_error() -> None:
    with pytest.raises(ScorerSkipped, match="skipped the run in step 'analyze'") as caught:
        create_exact_match_scorer().run_sync(input="2+2?", output="4")
    assert isinstance(caught.value, ScorerError)
    assert caught.value.skip_reason == "no_ground_truth" and caught.value.step == "analyze"
    with pytest.raises(ValueError, match="short reason code"):
        SkipRun("missing", reason="")


def test_a_failed_run_is_skipped_unless_the_entry_scores_errors(dead_letter: Path) -> None:
    memory = MemorySink()
    judged = create_scorer(id="on_errors").generate_score(lambda run, **_: float(run.error is None))
    plain = create_scorer(id="plain").generate_score(lambda **_: 1.0)
    engine = ScoringEngine(
        {"on_errors": {"scorer": judged, "score_errors": True}, "plain": plain},
        sinks=[memory],
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    engine.submit(Run(run_id="boom", input="q", output=None, error="RuntimeError: backend down"))
    assert engine.shutdown()
    by = {r.scorer_id: r for r in memory.records}
    assert by["on_errors"].outcome == "scored" and by["on_errors"].score == 0.0
    skipped = by["plain"]
    assert isinstance(skipped, ScoreSkipped) and skipped.skip_reason == "run_failed"
    assert "backend down" in skipped.reason and skipped.run_id == "boom"
    stats = accounted(engine)
    assert (stats.scored, stats.skipped, stats.skipped_by_scorer) == (1, 1, {"on_errors": 0, "plain": 1})
    with pytest.raises(ValueError, match="score_errors must be True or False"):
        ScoringEngine({"plain": {"scorer": plain, "score_errors": "yes"}}, sinks=[])
