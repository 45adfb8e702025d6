"""Canary epochs: the labelled runs re-judged by the scorer as it is now, stored as canary records, and
compared with the labels and with the previous epoch; one warning when the agreement leaves the
previous epoch's interval. SQLite and PostgreSQL."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel
from trust_stores import write_labelled_runs

from agentevals import PromptStep, Scorer, create_scorer
from agentevals._model._run import Run
from agentevals._store._store import open_store
from agentevals._trust._canary import CanaryEpoch, changed_runs, epoch_agreement, moves, run_canary
from agentevals._trust._stats import Confusion
from agentevals.testing import FakeJudgeServer

AT = datetime(2026, 3, 1, tzinfo=UTC)


def _spots_good(run: Run, **_: Any) -> float:
    return 1.0 if "good" in run.output_text else 0.0


def _passes_everything(run: Run, **_: Any) -> float:
    return 1.0


def _fails(run: Run, **_: Any) -> float:
    raise RuntimeError("the judge's key expired")


def _scorer(formula: Any) -> Scorer:
    return create_scorer(id="helpfulness").generate_score(formula)


def _canary(address: str, table: str, scorer: Scorer, **options: Any) -> CanaryEpoch:
    with open_store(address, table=table) as store:
        return run_canary(store, scorer, **options)


def _canary_rows(address: str, table: str) -> list[tuple[Any, ...]]:
    with open_store(address, table=table) as store:
        return store.reading.rows(
            f"SELECT run_id, eval_id, metadata, score, outcome FROM {table} WHERE source = 'canary' "
            "ORDER BY created_at, run_id"
        )


async def test_a_stable_scorer_keeps_its_agreement_and_warns_nothing(
    store: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    address, table = store
    await write_labelled_runs(address, table)
    first = _canary(address, table, _scorer(_spots_good))
    assert first.previous is None and not first.drifted
    assert (first.epoch.scored, first.epoch.n, first.epoch.confusion) == (10, 10, Confusion(tp=6, tn=4))
    assert "the first epoch, kept as the baseline" in first.summary()
    second = _canary(address, table, _scorer(_spots_good))
    assert second.previous is not None and second.previous.epoch_id == first.epoch.epoch_id
    assert (second.moved, second.changed, second.drifted) == ((), (), False)
    assert second.summary().endswith("; no drift")
    assert not [r for r in caplog.records if r.name == "agentevals.canary"]


async def test_each_epoch_is_stored_as_canary_records_beside_the_scores(store: tuple[str, str]) -> None:
    address, table = store
    await write_labelled_runs(address, table)
    first = _canary(address, table, _scorer(_spots_good))
    second = _canary(address, table, _scorer(_spots_good))
    rows = _canary_rows(address, table)
    assert len(rows) == 20
    assert {row[1] for row in rows} == {first.epoch.epoch_id, second.epoch.epoch_id}
    for run_id, epoch_id, metadata, score, outcome in rows:
        stamp = (json.loads(metadata) if isinstance(metadata, str) else metadata)["canary_epoch"]
        assert stamp["id"] == epoch_id and stamp["at"].startswith("20")
        assert (outcome, score) == ("scored", 1.0 if int(run_id[1:]) < 6 else 0.0)
    with open_store(address, table=table) as opened:
        live = opened.reading.rows(f"SELECT COUNT(*) FROM {table} WHERE source = 'live'")
    assert live[0][0] == 10  # the scores the canary re-judged are kept as they were


async def test_a_changed_formula_drifts_with_one_warning_naming_what_moved(
    store: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    address, table = store
    await write_labelled_runs(address, table)
    baseline = _canary(address, table, _scorer(_spots_good))
    caplog.set_level(logging.WARNING, logger="agentevals.canary")
    drifted = _canary(address, table, _scorer(_passes_everything))
    assert drifted.drifted and [m.metric for m in drifted.moved] == ["accuracy", "kappa"]
    assert drifted.moved[0].before == baseline.epoch.accuracy and drifted.moved[0].after is not None
    assert drifted.moved[0].after.value == 0.6
    assert drifted.epoch.disagreeing == drifted.changed == ("r6", "r7", "r8", "r9")
    warnings = [r for r in caplog.records if r.name == "agentevals.canary"]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    text = warnings[0].getMessage()
    assert "helpfulness drifted" in text and "accuracy 1.000 [0.722, 1.000] -> 0.600" in text
    assert "runs that disagree with the labels now: r6, r7, r8, r9" in text
    alert = drifted.alert("scores.db")
    assert list(alert) == [
        "event",
        "store",
        "scorer",
        "threshold",
        "epoch",
        "previous_epoch",
        "moved",
        "disagreeing_runs",
        "changed_runs",
        "missing_runs",
    ]
    assert alert["moved"][0] == {
        "metric": "accuracy",
        "from": {"value": 1.0, "low": pytest.approx(0.7225, abs=1e-4), "high": pytest.approx(1.0)},
        "to": {"value": 0.6, "low": pytest.approx(0.3127, abs=1e-4), "high": pytest.approx(0.8318, abs=1e-4)},
    }
    assert json.loads(json.dumps(alert)) == alert


async def test_a_judge_that_fails_every_run_has_drifted(store: tuple[str, str]) -> None:
    address, table = store
    await write_labelled_runs(address, table)
    _canary(address, table, _scorer(_spots_good))
    broken = _canary(address, table, _scorer(_fails))
    assert (broken.epoch.scored, broken.epoch.unscored, broken.epoch.accuracy) == (0, 10, None)
    assert [(m.metric, m.after) for m in broken.moved] == [("accuracy", None), ("kappa", None)]
    assert "accuracy 1.000 [0.722, 1.000] -> none" in broken.warning()
    assert {row[4] for row in _canary_rows(address, table)[10:]} == {"failed"}


async def test_the_pinned_runs_can_be_named_and_missing_ones_are_reported(store: tuple[str, str]) -> None:
    address, table = store
    await write_labelled_runs(address, table)
    found = _canary(address, table, _scorer(_spots_good), runs=["r0", "r7", "gone"])
    assert (found.epoch.scored, found.epoch.n, found.missing) == (2, 2, ("gone",))
    with pytest.raises(ValueError, match="none of the 1 pinned runs is stored"):
        _canary(address, table, _scorer(_spots_good), runs=["gone"])


async def test_a_scorer_nobody_labelled_has_nothing_to_judge(store: tuple[str, str]) -> None:
    address, table = store
    await write_labelled_runs(address, table)
    unlabelled = create_scorer(id="tone").generate_score(_spots_good)
    with pytest.raises(ValueError, match=r"nobody labelled a run 'tone'.*--runs FILE"):
        _canary(address, table, unlabelled)


async def test_a_judged_scorer_whose_replies_change_drifts(store: tuple[str, str]) -> None:
    class Verdict(BaseModel):
        good: bool

    address, table = store
    await write_labelled_runs(address, table)
    honest = {"value": True}

    def reply(request: Any) -> dict[str, bool]:
        text = str(request.body["messages"])
        return {"good": ("good answer" in text) == honest["value"]}

    with FakeJudgeServer(responder=reply) as server:
        judged = (
            create_scorer(id="helpfulness", judge=server.judge())
            .analyze(
                PromptStep(
                    description="verdict",
                    create_prompt=lambda run, **_: f"Is this answer good? {run.output_text}",
                    output_schema=Verdict,
                )
            )
            .generate_score(lambda results, **_: 1.0 if results.analyze_step_result.good else 0.0)
        )
        steady = [_canary(address, table, judged) for _ in range(2)]
        honest["value"] = False  # the model behind the judge changed
        drifted = _canary(address, table, judged)
    assert [found.drifted for found in steady] == [False, False]
    assert steady[1].epoch.accuracy is not None and steady[1].epoch.accuracy.value == 1.0
    assert drifted.drifted and drifted.epoch.accuracy is not None and drifted.epoch.accuracy.value == 0.0
    assert drifted.epoch.version == steady[0].epoch.version  # same configuration, other answers


def test_an_epochs_agreement_pairs_each_label_with_its_runs_verdict() -> None:
    labels = {"a": [True, False], "b": [True], "c": [False]}
    epoch = epoch_agreement("e1", AT, {"a": True, "b": None, "c": True, "d": False}, labels, "v1")
    assert (epoch.scored, epoch.unscored, epoch.n) == (3, 1, 3)
    assert epoch.confusion == Confusion(tp=1, fp=2)
    assert epoch.disagreeing == ("a", "c")


def test_a_measure_moves_when_it_leaves_the_previous_interval() -> None:
    labels = {f"r{n}": [n < 6] for n in range(10)}
    right = epoch_agreement("e1", AT, {f"r{n}": n < 6 for n in range(10)}, labels, "v1")
    one_off = epoch_agreement("e2", AT, {f"r{n}": n < 7 for n in range(10)}, labels, "v1")
    assert [m.metric for m in moves(right, one_off)] == ["kappa"]  # accuracy 0.9 is inside [0.72, 1]
    assert moves(right, right) == ()
    assert [m.metric for m in moves(one_off, right)] == ["accuracy"]  # better is a change all the same
    assert changed_runs(right.verdicts, one_off.verdicts) == ("r6",)
