"""``agentevals export``: records stored by live scoring (a real SQLite file, and the real PostgreSQL on
127.0.0.1:5432) written as CSV and JSON Lines through the CLI, one row per record with its run's summary;
filters; usage errors exit 2."""

from __future__ import annotations

import csv
import io
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentevals import Run, ScoringEngine, create_scorer
from agentevals._evals._export import EXPORT_COLUMNS
from agentevals.cli import main
from agentevals.engine import QueueOptions
from agentevals.sinks import PostgresSink, SQLiteSink


def _store(sink: Any) -> None:
    """Four runs scored by two scorers: two runs of entity "billing"; run-3 failed (skipped records)."""
    length = create_scorer(id="length").generate_score(lambda run, **_: min(1.0, len(run.output_text) / 10))
    shout = create_scorer(id="shout").generate_score(lambda run, **_: float(run.output_text.isupper()))
    engine = ScoringEngine([length, shout], sinks=[sink], queue=QueueOptions(linger=0))
    for i in range(3):
        entity = "billing" if i < 2 else "support"
        messages = [
            {"role": "user", "content": f"question {i}"},
            {"role": "assistant", "content": f"ANSWER, {i}"},
        ]
        assert engine.submit(Run.from_messages(messages, run_id=f"run-{i}", entity=entity, duration_ms=12.5))
    assert engine.submit(Run(run_id="run-3", input="question 3", output=None, entity="support", error="boom"))
    assert engine.shutdown(timeout=30)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "scores.db"
    _store(SQLiteSink(path))
    return path


def _csv(text: str) -> list[dict[str, str]]:
    reader = csv.reader(io.StringIO(text))
    header = next(reader)
    assert tuple(header) == EXPORT_COLUMNS  # a stable header
    return [dict(zip(header, row, strict=True)) for row in reader]


def test_export_csv_to_stdout(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "--db", str(db)]) == 0
    rows = _csv(capsys.readouterr().out)
    assert len(rows) == 8
    by_key = {(r["run_id"], r["scorer_id"]): r for r in rows}
    first = by_key[("run-0", "length")]
    assert (first["input"], first["output"], first["entity"], first["outcome"]) == (
        "question 0",
        "ANSWER, 0",
        "billing",
        "scored",
    )
    assert float(first["score"]) == 0.9 and float(first["run_duration_ms"]) == 12.5
    assert json.loads(first["metadata"]) == {} and first["error_type"] == ""
    failed = by_key[("run-3", "shout")]
    assert (failed["outcome"], failed["skip_reason"], failed["run_error"], failed["score"]) == (
        "skipped",
        "run_failed",
        "boom",
        "",
    )
    assert [r["created_at"] for r in rows] == sorted(r["created_at"] for r in rows)  # oldest first


def test_export_jsonl_filters_and_output_file(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out" / "scores.jsonl"
    out.parent.mkdir()
    args = ["export", "--db", str(db), "--format", "jsonl", "--scorer", "shout", "--entity", "billing"]
    assert main([*args, "--output", str(out), "--since", "1d"]) == 0
    assert "exported 2 records" in capsys.readouterr().err
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["run_id"], r["score"], r["input"]) for r in sorted(lines, key=lambda r: r["run_id"])] == [
        ("run-0", 1.0, "question 0"),
        ("run-1", 1.0, "question 1"),
    ]
    assert all(list(line) == list(EXPORT_COLUMNS) and line["metadata"] == {} for line in lines)
    assert main([*args, "--since", "2999-01-01"]) == 0
    assert capsys.readouterr().out == ""  # nothing that new


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--db", "{tmp}/missing.db"], "no agentevals store"),
        (["--db", "{tmp}/notes.txt"], "not a SQLite database"),
        (["--db", "{db}", "--since", "yesterday"], "--since"),
        (["--db", "{db}", "--output", "{tmp}/no/such/dir/out.csv"], "--output"),
        (["--db", "{db}", "--format", "xml"], "invalid choice"),
    ],
)
def test_export_usage_errors(
    db: Path, tmp_path: Path, extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("not a database " * 100)
    assert main(["export", *[a.format(tmp=tmp_path, db=db) for a in extra]]) == 2
    assert message in capsys.readouterr().err


@pytest.fixture
def pg(postgres: Any) -> Iterator[tuple[str, str]]:
    import psycopg

    table = f"agentevals_export_{uuid.uuid4().hex[:12]}"
    yield postgres.url, table
    with psycopg.connect(postgres.url, autocommit=True) as conn:
        for name in (table, f"{table}_runs", f"{table}_meta", f"{table}_rollup"):
            conn.execute(f"DROP TABLE IF EXISTS {name}")


def test_export_postgres(pg: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    url, table = pg
    _store(PostgresSink(url, table=table))
    assert main(["export", "--db", url, "--table", table]) == 0
    rows = _csv(capsys.readouterr().out)
    assert sorted((r["run_id"], r["scorer_id"], r["outcome"]) for r in rows) == sorted(
        (f"run-{i}", s, "skipped" if i == 3 else "scored") for i in range(4) for s in ("length", "shout")
    )
    assert {r["input"] for r in rows} == {f"question {i}" for i in range(4)}
    assert main(["export", "--db", url, "--table", table, "--format", "jsonl", "--scorer", "length"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 4 and {line["scorer_id"] for line in lines} == {"length"}
    assert all(line["created_at"].endswith("+00:00") for line in lines)


def test_a_jsonl_file_is_a_read_only_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentevals.sinks import JsonlSink

    path = tmp_path / "scores.jsonl"
    _store(JsonlSink(path))
    before = path.read_bytes()
    assert main(["report", "--db", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["total"], report["runs"]) == (8, 4)
    assert main(["export", "--db", str(path), "--scorer", "length"]) == 0
    rows = _csv(capsys.readouterr().out)
    assert sorted((r["run_id"], r["input"], r["outcome"]) for r in rows) == [
        ("run-0", "question 0", "scored"),
        ("run-1", "question 1", "scored"),
        ("run-2", "question 2", "scored"),
        ("run-3", "question 3", "skipped"),
    ]
    assert path.read_bytes() == before  # only read

    assert main(["rescore", "--db", str(path), "--scorer", "exact_match", "--no-progress"]) == 0
    assert "rescored 4 runs" in capsys.readouterr().out  # the records are appended to the file
    added = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[8:]]
    assert sorted((r["run_id"], r["scorer_id"], r["source"]) for r in added) == [
        (f"run-{i}", "exact_match", "rescore") for i in range(4)
    ]
    assert added[0]["run"]["input"]  # the run inline, as JsonlSink writes it
    assert main(["rescore", "--db", str(path), "--scorer", "exact_match", "--no-progress"]) == 0
    assert "4 already scored" in capsys.readouterr().out


async def test_a_file_that_is_not_a_store_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentevals import ScoreResult
    from agentevals.sinks import DeadLetter, MemorySink

    dead = DeadLetter(tmp_path / "dead.jsonl")  # a dead-letter file is not a store
    await dead.write(
        [ScoreResult(scorer_id="s", scorer_name="s", run_id="r", score=1.0)], MemorySink(), OSError("x")
    )
    dead.close()
    (tmp_path / "broken.jsonl").write_text('{"id": "a", "run_id"\n')
    for name, problem in (
        ("dead.jsonl", "line 1 is not a record written by JsonlSink (no id"),
        ("broken.jsonl", "line 1"),
    ):
        for command in (["report"], ["export"], ["rescore", "--scorer", "exact_match"]):
            assert main([*command, "--db", str(tmp_path / name)]) == 2
            err = capsys.readouterr().err
            assert problem in err and "Traceback" not in err, err


FORMULAS = ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "\tpadded", "\rreturn"]


def _formula_store(path: Path) -> None:
    """Runs whose input, output, reason and entity start like spreadsheet formulas; scores stay numbers."""
    echo = (
        create_scorer(id="echo")
        .generate_score(lambda run, **_: 0.5)
        .generate_reason(lambda run, **_: run.output_text)
    )
    engine = ScoringEngine([echo], sinks=[SQLiteSink(path)], queue=QueueOptions(linger=0))
    for i, text in enumerate(FORMULAS):
        assert engine.submit(Run(run_id=f"run-{i}", input=text, output=text, entity=text))
    assert engine.shutdown(timeout=30)


def test_csv_export_neutralises_formulas_unless_told_not_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "formulas.db"
    _formula_store(path)
    assert main(["export", "--db", str(path)]) == 0
    rows = _csv(capsys.readouterr().out)
    assert sorted(r["output"] for r in rows) == sorted("'" + text for text in FORMULAS)
    for row in rows:
        assert row["input"] == row["output"] == row["entity"] == row["reason"]
        assert row["score"] == "0.5"  # a number, not a text cell
    assert not [cell for row in rows for cell in row.values() if cell[:1] in ("=", "+", "-", "@", "\t", "\r")]
    assert main(["export", "--db", str(path), "--no-csv-escape"]) == 0
    assert sorted(r["output"] for r in _csv(capsys.readouterr().out)) == sorted(FORMULAS)
    assert main(["export", "--db", str(path), "--format", "jsonl"]) == 0  # JSON Lines are data as stored
    assert sorted(json.loads(line)["output"] for line in capsys.readouterr().out.splitlines()) == sorted(
        FORMULAS
    )
