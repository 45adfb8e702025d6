"""A scorer's agreement with people's labels, per version: which label meets which record, the
threshold, the confusion and its rates, numeric agreement, disagreements worst first, the raw, the
labels' and the corrected pass rate. SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from trust_stores import write

from agentevals import ScoreResult
from agentevals._model._thresholds import Threshold
from agentevals._store._catalog_tables import ScorerInfo
from agentevals._trust._stats import Confusion, corrected_pass_rate, numeric_agreement, wilson
from agentevals.evals import Labels, agreement
from agentevals.results import ScoreFailure, ScoreRecord, ScoreSkipped

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _result(
    run_id: str, score: float, version: str = "v1", *, minutes: int = 0, eval_id: str | None = None
) -> ScoreResult:
    return ScoreResult(
        scorer_id="helpfulness",
        scorer_name="Helpfulness",
        scorer_version=version,
        run_id=run_id,
        score=score,
        eval_id=eval_id,
        source="live",
        created_at=T0 + timedelta(minutes=minutes),
    )


def _label_all(address: str, table: str, labels: list[tuple[str, object, str]]) -> None:
    with Labels(address, table=table) as store:
        for run_id, value, labeller in labels:
            store.add(run_id, "helpfulness", value, labeller=labeller)  # type: ignore[arg-type]


async def test_each_label_meets_its_runs_latest_scored_record_of_each_version(store: tuple[str, str]) -> None:
    address, table = store
    await write(
        address,
        table,
        [
            _result("r1", 0.9, "v1"),
            _result("r2", 0.2, "v1"),
            _result("r1", 0.1, "v2", minutes=1, eval_id="first"),
            _result("r1", 0.8, "v2", minutes=2, eval_id="second"),  # r1's latest v2 record
            _result("r2", 0.7, "v2", minutes=3),
        ],
    )
    _label_all(address, table, [("r1", "pass", "ann"), ("r1", "fail", "bob"), ("r2", "fail", "ann")])
    found = agreement(address, "helpfulness", table=table)
    assert [v.version for v in found.versions] == ["v2", "v1"]  # newest first
    v2, v1 = found.versions
    # Two people labelled r1: two pairs. v2 passes r1 (0.8) and r2 (0.7); v1 passes r1 only.
    assert (v2.n, v2.confusion) == (3, Confusion(tp=1, fn=0, fp=2, tn=0))
    assert (v1.n, v1.confusion) == (3, Confusion(tp=1, fn=0, fp=1, tn=1))
    assert (found.labels, found.unmatched) == (3, 0)
    only_v1 = agreement(address, "helpfulness", version="v1", table=table)
    assert [v.version for v in only_v1.versions] == ["v1"] and only_v1.versions[0] == v1


async def test_the_rates_come_from_the_confusion(store: tuple[str, str]) -> None:
    address, table = store
    scores = [0.9, 0.8, 0.7, 0.3, 0.2, 0.6, 0.1, 0.4]
    verdicts = ["pass", "pass", "pass", "pass", "fail", "fail", "fail", "fail"]
    await write(address, table, [_result(f"r{n}", s) for n, s in enumerate(scores)])
    _label_all(address, table, [(f"r{n}", v, "ann") for n, v in enumerate(verdicts)])
    v1 = agreement(address, "helpfulness", table=table).versions[0]
    confusion = Confusion(tp=3, fn=1, fp=1, tn=3)
    assert v1.confusion == confusion
    assert (v1.accuracy, v1.tpr, v1.tnr, v1.kappa) == (
        confusion.accuracy(),
        confusion.tpr(),
        confusion.tnr(),
        confusion.kappa(),
    )
    assert v1.labels_pass_rate == wilson(4, 8)
    assert v1.numeric is None  # pass/fail labels only


async def test_the_threshold_is_the_given_one_else_the_stored_one_else_one_half(
    store: tuple[str, str],
) -> None:
    address, table = store
    await write(address, table, [_result("r1", 0.6), _result("r2", 0.8)])
    _label_all(address, table, [("r1", "pass", "ann"), ("r2", "pass", "ann")])
    default = agreement(address, "helpfulness", table=table)
    assert (default.threshold, default.threshold_origin) == (Threshold(min=0.5), "default")
    assert default.versions[0].confusion == Confusion(tp=2)
    await write(
        address, table, [], [ScorerInfo("helpfulness", "Helpfulness", "v1", "live", threshold_min=0.7)]
    )
    stored = agreement(address, "helpfulness", table=table)
    assert (stored.threshold, stored.threshold_origin) == (Threshold(min=0.7), "stored")
    assert stored.versions[0].confusion == Confusion(tp=1, fn=1)
    given = agreement(address, "helpfulness", threshold=0.9, table=table)
    assert (given.threshold, given.threshold_origin) == (Threshold(min=0.9), "given")
    assert given.versions[0].confusion == Confusion(fn=2)


async def test_a_pass_label_passes_whichever_way_the_threshold_points(store: tuple[str, str]) -> None:
    address, table = store
    # A toxicity-like scorer: lower is better. A person's "pass" is a pass; a score label meets the bound.
    await write(address, table, [_result("r1", 0.1), _result("r2", 0.9), _result("r3", 0.05)])
    _label_all(address, table, [("r1", "pass", "ann"), ("r2", "fail", "ann"), ("r3", 0.5, "ann")])
    found = agreement(address, "helpfulness", threshold={"max": 0.2}, table=table)
    assert found.versions[0].confusion == Confusion(tp=1, fp=1, tn=1)  # r3's label 0.5 fails <= 0.2


async def test_numeric_labels_are_compared_with_the_scores(store: tuple[str, str]) -> None:
    address, table = store
    scores = [0.1, 0.4, 0.35, 0.8, 0.9]
    values = [0.0, 0.5, 0.3, 0.7, 1.0]
    await write(address, table, [_result(f"r{n}", s) for n, s in enumerate(scores)])
    _label_all(address, table, [(f"r{n}", v, "ann") for n, v in enumerate(values)] + [("r0", "fail", "bob")])
    v1 = agreement(address, "helpfulness", table=table).versions[0]
    assert v1.n == 6  # the pass/fail label counts in the confusion, not in the numeric agreement
    assert v1.numeric == numeric_agreement(scores, values)


async def test_disagreements_are_listed_worst_first(store: tuple[str, str]) -> None:
    address, table = store
    await write(
        address, table, [_result("r1", 0.55), _result("r2", 0.95), _result("r3", 0.3), _result("r4", 0.9)]
    )
    _label_all(
        address,
        table,
        [("r1", "fail", "ann"), ("r2", 0.2, "bob"), ("r3", "pass", "ann"), ("r4", "pass", "ann")],
    )
    v1 = agreement(address, "helpfulness", table=table).versions[0]
    assert [(d.run_id, d.labeller, d.gap) for d in v1.disagreements] == [
        ("r2", "bob", pytest.approx(0.75)),
        ("r3", "ann", pytest.approx(0.7)),
        ("r1", "ann", pytest.approx(0.55)),
    ]
    worst = v1.disagreements[0]
    assert (worst.score, worst.label, worst.kind) == (0.95, 0.2, "score")


async def test_the_raw_pass_rate_counts_every_scored_record_of_the_version(store: tuple[str, str]) -> None:
    address, table = store
    failure = ScoreFailure(
        scorer_id="helpfulness",
        scorer_name="Helpfulness",
        scorer_version="v1",
        run_id="r9",
        error_type="TimeoutError",
        error_message="judge timed out",
        created_at=T0,
    )
    skipped = ScoreSkipped(
        scorer_id="helpfulness",
        scorer_name="Helpfulness",
        scorer_version="v1",
        run_id="r8",
        skip_reason="no_ground_truth",
        reason="no ground truth",
        created_at=T0,
    )
    records: list[ScoreRecord] = [_result(f"r{n}", s, minutes=n) for n, s in enumerate([0.9, 0.6, 0.2, 0.4])]
    await write(address, table, [*records, failure, skipped])
    _label_all(address, table, [("r0", "pass", "ann"), ("r7", "pass", "ann"), ("r9", "fail", "ann")])
    found = agreement(address, "helpfulness", table=table)
    v1 = found.versions[0]
    assert (v1.raw.scored, v1.raw.errored, v1.raw.passed, v1.raw.rate) == (4, 1, 2, wilson(2, 4))
    assert (found.labels, found.unmatched) == (3, 2)  # r7 is not scored, r9 only errored
    later = agreement(address, "helpfulness", since=T0 + timedelta(minutes=2), table=table).versions[0]
    assert (later.raw.scored, later.raw.passed, later.n) == (2, 0, 1)  # pairs are not limited by since


async def test_the_pass_rate_is_corrected_once_each_class_has_enough_labels(store: tuple[str, str]) -> None:
    address, table = store
    # 50 runs people pass (the judge passes 45), 50 they fail (the judge passes 5), 200 unlabelled.
    labelled = [0.9] * 45 + [0.2] * 5 + [0.8] * 5 + [0.1] * 45
    unlabelled = [0.9] * 120 + [0.1] * 80
    scores = labelled + unlabelled
    await write(address, table, [_result(f"r{n}", s) for n, s in enumerate(scores)])
    _label_all(address, table, [(f"r{n}", "pass" if n < 50 else "fail", "ann") for n in range(100)])
    v1 = agreement(address, "helpfulness", table=table).versions[0]
    expected = corrected_pass_rate(170, 300, Confusion(tp=45, fn=5, fp=5, tn=45))
    assert expected.estimate is not None
    assert v1.corrected == expected
    assert v1.corrected_text == str(expected.estimate)
    refused = agreement(address, "helpfulness", min_per_class=60, table=table).versions[0]
    assert refused.corrected is not None and refused.corrected.estimate is None
    assert refused.corrected.raw == pytest.approx(170 / 300)
    assert refused.corrected_text == "too few labels (50 passing, 50 failing; 60 of each needed)"


async def test_a_judge_no_better_than_chance_gets_no_corrected_rate(store: tuple[str, str]) -> None:
    address, table = store
    scores = [0.9, 0.1] * 40  # the judge's verdict has nothing to do with people's
    await write(address, table, [_result(f"r{n}", s) for n, s in enumerate(scores)])
    _label_all(address, table, [(f"r{n}", "pass" if n % 4 < 2 else "fail", "ann") for n in range(80)])
    v1 = agreement(address, "helpfulness", table=table).versions[0]
    assert (v1.confusion.positives, v1.confusion.negatives) == (40, 40)
    assert v1.corrected is not None and v1.corrected.estimate is None
    assert v1.corrected_text == "judge not measurably better than chance"


async def test_a_version_without_labels_is_listed_with_its_pass_rate(store: tuple[str, str]) -> None:
    address, table = store
    await write(address, table, [_result("r1", 0.9, "v1"), _result("r1", 0.2, "v2", minutes=1)])
    _label_all(address, table, [("r9", "pass", "ann")])  # a run no version scored
    found = agreement(address, "helpfulness", table=table)
    assert [(v.version, v.n, v.raw.scored) for v in found.versions] == [("v2", 0, 1), ("v1", 0, 1)]
    assert found.versions[0].corrected_text == "too few labels (0 passing, 0 failing; 30 of each needed)"
    assert found.unmatched == 1


def test_min_per_class_is_a_positive_count(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="min_per_class is a number of labels, 1 or more"):
        agreement(tmp_path / "none.db", "helpfulness", min_per_class=0)


async def test_a_jsonl_store_has_no_agreement(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="JSONL file, which keeps score records only"):
        agreement(tmp_path / "scores.jsonl", "helpfulness")
