"""People's labels through ``Labels``: added and never replaced, listed, deleted, read back beside the
scores of the runs they label; values checked when added; a JSONL store keeps none. SQLite and
PostgreSQL."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from trust_stores import write

from agentevals import ScoreResult
from agentevals._store._store import open_store
from agentevals.evals import Label, Labels
from agentevals.results import ScoreFailure
from agentevals.sinks import JsonlSink

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _result(run_id: str, score: float, version: str = "v1", minutes: int = 0) -> ScoreResult:
    return ScoreResult(
        scorer_id="helpfulness",
        scorer_name="Helpfulness",
        scorer_version=version,
        run_id=run_id,
        score=score,
        created_at=T0 + timedelta(minutes=minutes),
    )


def test_labels_are_added_listed_and_deleted(store: tuple[str, str]) -> None:
    address, table = store
    with Labels(address, table=table) as labels:
        first = labels.add("r1", "helpfulness", "pass", labeller="ann", note="clear and complete")
        second = labels.add("r1", "helpfulness", 0.25, labeller="bob")
        other = labels.add("r2", "helpful", False)
        assert (first.value, first.kind, first.note) == (1.0, "pass_fail", "clear and complete")
        assert (second.value, second.kind, other.value, other.labeller) == (0.25, "score", 0.0, "")
        assert labels.list() == [first, second, other]  # both people's labels of r1 are kept
        assert labels.list(run_id="r1") == [first, second]
        assert labels.list(name="helpful") == [other]
        assert labels.list(run_id="r1", name="helpful") == []
        assert labels.delete(second.label_id) is True
        assert labels.delete(second.label_id) is False
        assert [label.label_id for label in labels.list()] == [first.label_id, other.label_id]
    with Labels(address, table=table) as again:  # stored, not kept in memory
        stored = again.list(run_id="r1")[0]
    assert stored == first and stored.created_at.tzinfo is not None


@pytest.mark.parametrize(
    "value",
    [1.5, -0.1, float("nan"), "0.5", "yes", None, [1], 2],
)
def test_a_value_that_is_not_a_label_is_refused_saying_what_is_accepted(
    store: tuple[str, str], value: object
) -> None:
    address, table = store
    with Labels(address, table=table) as labels:
        with pytest.raises(ValueError, match=r"a number in \[0, 1\], True or False, or 'pass' or 'fail'"):
            labels.add("r1", "helpfulness", value)  # type: ignore[arg-type]
        assert labels.list() == []


def test_a_label_needs_a_run_and_a_name() -> None:
    with pytest.raises(ValueError, match="run_id is a non-empty string"):
        Label.new("", "helpfulness", True)
    with pytest.raises(ValueError, match="name is a non-empty string"):
        Label.new("r1", "  ", True)
    with pytest.raises(ValueError, match="labeller is a string"):
        Label.new("r1", "helpfulness", True, labeller=None)  # type: ignore[arg-type]


async def test_runs_are_read_with_their_labels_and_scores_before_and_after_scoring(
    store: tuple[str, str],
) -> None:
    address, table = store
    with Labels(address, table=table) as labels:
        labels.add("r1", "helpfulness", "fail", labeller="ann")
        labels.add("r2", "helpfulness", 0.9, labeller="ann")  # labelled before it is scored
        labels.add("r1", "helpfulness", "pass", labeller="bob")
        labels.add("r1", "tone", "pass")  # another name: not a label of this scorer
    await write(
        address,
        table,
        [_result("r1", 0.2, "v1"), _result("r1", 0.6, "v2", minutes=5), _result("r3", 0.9, "v1")],
    )
    with Labels(address, table=table) as labels:
        runs = list(labels.runs("helpfulness"))
        only_v2 = list(labels.runs("helpfulness", scorer_version="v2"))
    assert [run.run_id for run in runs] == ["r1", "r2"]
    assert [(label.labeller, label.value) for label in runs[0].labels] == [("ann", 0.0), ("bob", 1.0)]
    assert [(r.scorer_version, r.score, r.outcome) for r in runs[0].records] == [
        ("v1", 0.2, "scored"),
        ("v2", 0.6, "scored"),
    ]
    assert runs[0].records[0].created_at == T0
    assert runs[1].records == ()
    assert [[r.scorer_version for r in run.records] for run in only_v2] == [["v2"], []]


async def test_an_errored_record_is_read_with_its_run_but_has_no_score(store: tuple[str, str]) -> None:
    address, table = store
    failure = ScoreFailure(
        scorer_id="helpfulness",
        scorer_name="Helpfulness",
        scorer_version="v1",
        run_id="r1",
        error_type="TimeoutError",
        error_message="judge timed out",
    )
    await write(address, table, [failure])
    with Labels(address, table=table) as labels:
        labels.add("r1", "helpfulness", True)
        (run,) = labels.runs("helpfulness")
    assert [(r.outcome, r.score) for r in run.records] == [("failed", None)]


def test_an_open_store_is_used_and_left_open(store: tuple[str, str]) -> None:
    address, table = store
    with open_store(address, table=table) as opened:
        with Labels(opened) as labels:
            labels.add("r1", "helpfulness", "pass")
        assert opened.reading.rows(f"SELECT COUNT(*) FROM {opened.tables.labels}") == [(1,)]


async def test_a_jsonl_store_keeps_no_labels(tmp_path: Path) -> None:
    path = tmp_path / "scores.jsonl"
    sink = JsonlSink(path)
    await sink.write([_result("r1", 0.5)])
    await sink.close()
    with pytest.raises(ValueError, match=r"JSONL file, which keeps score records only.*SQLite.*PostgreSQL"):
        Labels(path)
    with open_store(path) as opened, pytest.raises(ValueError, match="JSONL file"):
        Labels(opened)


def test_a_failed_batch_stores_no_label(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with Labels(_new_sqlite(path)) as labels:
        good = Label.new("r1", "helpfulness", "pass")
        with pytest.raises(sqlite3.IntegrityError):
            labels.add_all([good, good])  # the same id twice: the second insert fails
        assert labels.list() == []


def _new_sqlite(path: Path) -> Path:
    from agentevals.sinks import SQLiteSink

    SQLiteSink(path).check()
    return path
