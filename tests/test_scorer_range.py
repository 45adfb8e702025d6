"""A scorer's score range: scores outside it fail the run on every path, other ranges are rescaled."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentevals import Run, Scorer, ScorerError, ScoringEngine, create_scorer
from agentevals._model._failure import error_record
from agentevals.engine import DeliveryOptions
from agentevals.evals import rescore, run_evals
from agentevals.results import ScoreFailure, ScoreRecord, ScoreResult
from agentevals.scorers import all_of
from agentevals.sinks import MemorySink, SQLiteSink


def _returning(value: float, **options: Any) -> Scorer:
    return create_scorer(id="wild", **options).generate_score(lambda **_: value)


def _assert_out_of_range(record: ScoreRecord, value: str, bounds: str) -> None:
    assert isinstance(record, ScoreFailure), record
    assert record.error_type == "ValueError" and record.failed_step == "generate_score"
    assert "'wild'" in record.error_message and f"score {value}," in record.error_message
    assert f"range {bounds}" in record.error_message and "score_range=" in record.error_message


@pytest.mark.parametrize(("value", "shown"), [(7, "7.0"), (-0.5, "-0.5"), (1.0000001, "1.0000001")])
def test_a_score_outside_the_default_range_fails_the_run(value: float, shown: str) -> None:
    scorer = _returning(value)
    run = Run(input="q", output="a")
    with pytest.raises(ScorerError) as raised:
        scorer.run_sync(run)
    _assert_out_of_range(error_record(scorer=scorer, run=run, error=raised.value), shown, "[0, 1]")


@pytest.mark.parametrize(("value", "score"), [(0, 0.0), (7, 0.7), (10, 1.0)])
def test_a_declared_range_is_rescaled_and_the_raw_score_kept(value: float, score: float) -> None:
    scorer = _returning(value, score_range=(0, 10)).generate_reason(lambda score, **_: f"{score:g}/10")
    result = scorer.run_sync(input="q", output="a")
    assert result.score == pytest.approx(score) and result.raw_score == value
    assert result.reason == f"{value:g}/10"  # the reason step sees the scorer's own scale


def test_scores_of_the_default_range_have_no_raw_score() -> None:
    result = _returning(0.5).run_sync(input="q", output="a")
    assert result.score == 0.5 and result.raw_score is None


def test_a_negative_range_is_rescaled_too() -> None:
    assert _returning(-0.5, score_range=(-1, 1)).run_sync(input="q", output="a").score == 0.25


def test_a_score_outside_a_declared_range_fails_the_run() -> None:
    scorer = _returning(11, score_range=(0, 10))
    run = Run(input="q", output="a")
    with pytest.raises(ScorerError) as raised:
        scorer.run_sync(run)
    _assert_out_of_range(error_record(scorer=scorer, run=run, error=raised.value), "11.0", "[0, 10]")


@pytest.mark.parametrize("bad", [(1, 0), (0, 0), (0, float("inf")), (0,), "0-10", (True, 2), (0, "10")])
def test_an_invalid_range_is_refused_at_construction(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"score_range must be \(low, high\).*e\.g\. score_range=\(0, 10\)"):
        create_scorer(id="x", score_range=bad)


def test_copies_keep_the_range_and_the_range_is_part_of_the_version() -> None:
    stars = _returning(4, score_range=(0, 5))
    assert stars.with_id("stars").score_range == (0.0, 5.0)
    assert stars.generate_reason(lambda **_: "ok").run_sync(input="q", output="a").score == 0.8
    assert stars.version != _returning(4, score_range=(0, 4)).version


def test_combinators_combine_the_rescaled_scores() -> None:
    stars = _returning(4, score_range=(0, 5))
    assert all_of(stars).run_sync(input="q", output="a").score == 0.8


def test_live_scoring_stores_a_failed_record_and_a_rescaled_one(tmp_path: Path) -> None:
    memory = MemorySink()
    engine = ScoringEngine(
        [_returning(7), _returning(7, score_range=(0, 10)).with_id("stars")],
        sinks=[memory],
        delivery=DeliveryOptions(dead_letter=tmp_path / "dead.jsonl"),
    )
    engine.submit(Run(run_id="r", input="q", output="a"))
    assert engine.shutdown()
    records = {r.scorer_id: r for r in memory.records}
    _assert_out_of_range(records["wild"], "7.0", "[0, 1]")
    stars = records["stars"]
    assert isinstance(stars, ScoreResult) and stars.score == pytest.approx(0.7) and stars.raw_score == 7


def test_run_evals_counts_an_out_of_range_score_as_an_error() -> None:
    result = run_evals([{"input": "q"}], [_returning(-0.5)], lambda question: "a", progress=False)
    (record,) = result.to_records()
    _assert_out_of_range(record, "-0.5", "[0, 1]")
    assert result.scores["wild"] is None and result.verdict == "errored"


def test_rescore_stores_an_out_of_range_score_as_a_failed_row(tmp_path: Path) -> None:
    db = tmp_path / "scores.db"
    engine = ScoringEngine(
        _returning(1.0).with_id("ok"),
        sinks=[SQLiteSink(db)],
        delivery=DeliveryOptions(dead_letter=tmp_path / "d"),
    )
    engine.submit(Run(run_id="r", input="q", output="a"))
    assert engine.shutdown()
    summary = rescore(db, [_returning(7)], progress=False)
    assert summary.failed == 1
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT outcome, score, error_message FROM agentevals_scores WHERE scorer_id = 'wild'"
        ).fetchall()
    assert [(outcome, score) for outcome, score, _ in rows] == [("failed", None)]
    assert "score 7.0, outside its score range [0, 1]" in rows[0][2]


def test_the_raw_score_is_stored_beside_the_rescaled_one(tmp_path: Path) -> None:
    stars = create_scorer(id="stars", score_range=(0, 5)).generate_score(lambda run, **_: 4.0)
    unit = create_scorer(id="unit").generate_score(lambda run, **_: 0.25)
    db = tmp_path / "store.db"
    engine = ScoringEngine(
        [stars, unit], sinks=[SQLiteSink(db)], delivery=DeliveryOptions(dead_letter=tmp_path / "d")
    )
    engine.submit(Run(run_id="r", input="q", output="a"))
    assert engine.shutdown()
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT scorer_id, score, raw_score FROM agentevals_scores ORDER BY scorer_id")
        assert rows.fetchall() == [("stars", 0.8, 4.0), ("unit", 0.25, None)]
