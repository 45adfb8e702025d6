"""The `agentevals demo` command: runs offline, writes SQLite, prints a summary per scorer."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from agentevals_langchain import demo


def _result_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "agentevals.results" and r.levelno >= logging.INFO]


def test_demo_scores_twenty_runs_into_sqlite_and_logs_no_record_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "demo.db"
    with caplog.at_level(logging.INFO, logger="agentevals.results"):
        assert demo.main(["--db", str(db)]) == 0
    assert _result_lines(caplog) == []  # the summary table says it all
    out = capsys.readouterr().out
    table = out.split("scorer ", 1)[1]
    code_scorers = ("includes_expected", "keyword_coverage", "tone", "efficiency", "used_tool")
    for scorer in ("answer_relevancy", *code_scorers):
        assert scorer in table
    assert "20 runs" in out and "0 scorer failures" in out
    with sqlite3.connect(db) as conn:
        rows = dict(
            conn.execute("SELECT scorer_id, COUNT(*) FROM agentevals_scores GROUP BY scorer_id").fetchall()
        )
    assert all(rows[s] == 20 for s in code_scorers)
    assert 0 < rows["answer_relevancy"] < 20  # sampled at 50%


@pytest.mark.parametrize("asked", ["--verbose", "AGENTEVALS_DEBUG=1"])
def test_demo_logs_each_record_when_asked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, asked: str
) -> None:
    argv = ["--db", str(tmp_path / "demo.db")]
    if asked == "--verbose":
        argv.append(asked)
    else:
        monkeypatch.setenv("AGENTEVALS_DEBUG", "1")
    with caplog.at_level(logging.INFO, logger="agentevals.results"):
        assert demo.main(argv) == 0
    with sqlite3.connect(tmp_path / "demo.db") as conn:
        (stored,) = conn.execute("SELECT COUNT(*) FROM agentevals_scores").fetchone()
    assert len(_result_lines(caplog)) == stored > 100  # one line per record


def test_demo_with_a_judge_model_and_no_key_says_which_variable_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTEVALS_JUDGE_MODEL", "openai/gpt-4o-mini")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert demo.main(["--db", str(tmp_path / "demo.db")]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith("agentevals demo: ") and "OPENAI_API_KEY" in line
    assert "AGENTEVALS_JUDGE_MODEL" in line  # and how to go back to the offline judge
    assert "Traceback" not in captured.err and captured.out == ""


def test_scripted_agent_answers_and_summary_math() -> None:
    assert demo.calculator.invoke({"expression": "(3 + 4) * 5"}) == "35"
    assert demo.calculator.invoke({"expression": "144 / 12"}) == "12"

    class R:
        def __init__(self, scorer_id: str, score: float | None) -> None:
            self.scorer_id, self.score = scorer_id, score

    rows = demo.summarize([R("a", 1.0), R("a", 0.0), R("a", None), R("b", None)])
    assert rows == [("a", 3, 0.5, 0.0, 1.0, 1), ("b", 1, None, None, None, 1)]
    assert "failures" in demo.format_table(rows)


def test_demo_with_a_db_path_it_cannot_write_says_so_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    assert demo.main(["--db", str(not_a_dir / "demo.db")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("agentevals demo: sink 'sqlite' cannot store records")
