"""``agentevals rescore``: stored runs (a live ``ScoringEngine`` into a real SQLite file) scored again by
prebuilt scorers; usage errors exit 2."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentevals import Run, ScoringEngine, create_scorer
from agentevals.cli import main
from agentevals.engine import QueueOptions
from agentevals.sinks import SQLiteSink


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Six runs stored by live scoring: five answered (two of entity "billing"), one failed."""
    path = tmp_path / "scores.db"
    length = create_scorer(id="length").generate_score(lambda run, **_: min(1.0, len(run.output_text) / 10))
    engine = ScoringEngine(length, sinks=[SQLiteSink(path)], queue=QueueOptions(linger=0))
    for i in range(5):
        entity = "billing" if i < 2 else "support"
        answer = f"answer {i}"
        assert engine.submit(
            Run(run_id=f"run-{i}", input=f"question {i}", output=answer, ground_truth=answer, entity=entity)
        )
    assert engine.submit(Run(run_id="run-5", input="question 5", output=None, entity="support", error="boom"))
    assert engine.shutdown(timeout=30)
    return path


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_cli_rescore(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["rescore", "--db", str(db), "--scorer", "exact_match", "--no-progress"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "rescored 6 runs" in out and "5 scored" in out and "1 skipped" in out
    stored = "SELECT SUM(score), MIN(source) FROM agentevals_scores WHERE scorer_id = 'exact_match'"
    assert _rows(db, stored) == [(5.0, "rescore")]
    assert main(args) == 0
    assert "6 already scored" in capsys.readouterr().out
    assert main([*args[:3], "--scorer", "levenshtein", "--entity", "billing", "--limit", "1", "--since", "1d",
                 "--no-progress"]) == 0  # fmt: skip
    assert "rescored 1 runs" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--db", "{tmp}/missing.db"], "no agentevals store"),
        (["--db", "{tmp}/notes.txt"], "not a SQLite database"),
        (["--db", "{db}", "--since", "yesterday"], "--since"),
        (["--db", "{db}", "--limit", "-1"], "--limit"),
        (["--db", "{db}", "--concurrency", "0"], "--concurrency"),
    ],
)
def test_cli_usage_errors(
    db: Path, tmp_path: Path, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("not a database " * 100)
    args = [a.format(tmp=tmp_path, db=db) for a in extra]
    assert main(["rescore", *args, "--scorer", "exact_match", "--no-progress"]) == 2
    assert message in capsys.readouterr().err


def test_cli_rescore_interrupted_exits_130(
    db: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import agentevals.evals
    from agentevals.evals import RescoreSummary

    monkeypatch.setattr(
        agentevals.evals,
        "rescore",
        lambda *args, **kwargs: RescoreSummary(runs=6, scored=2, interrupted=True),
    )
    assert main(["rescore", "--db", str(db), "--scorer", "exact_match", "--no-progress"]) == 130
    captured = capsys.readouterr()
    assert "2 scored" in captured.out and "interrupted after 2 records" in captured.err


def test_cli_rescore_a_named_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "named.db"
    engine = ScoringEngine(
        create_scorer(id="one").generate_score(lambda **_: 1.0),
        sinks=[SQLiteSink(path, table="evals_scores")],
        queue=QueueOptions(linger=0),
    )
    assert engine.submit(Run(run_id="run-0", input="q", output="a", ground_truth="a"))
    assert engine.shutdown(timeout=30)
    args = ["rescore", "--db", str(path), "--scorer", "exact_match", "--no-progress"]
    assert main(args) == 2  # no agentevals_scores table there
    assert "has no 'agentevals_scores' table" in capsys.readouterr().err
    assert main([*args, "--table", "evals_scores"]) == 0
    assert "1 scored" in capsys.readouterr().out
    assert _rows(
        path, "SELECT scorer_id, score, source FROM evals_scores WHERE scorer_id = 'exact_match'"
    ) == [("exact_match", 1.0, "rescore")]
