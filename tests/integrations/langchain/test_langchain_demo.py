"""The `agentevals demo` command: runs offline, writes SQLite, prints a summary per scorer."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from agentevals_langchain import demo


def test_demo_scores_twenty_runs_into_sqlite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "demo.db"
    assert demo.main(["--db", str(db), "--quiet"]) == 0
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


def test_scripted_agent_answers_and_summary_math() -> None:
    assert demo.calculator.invoke({"expression": "(3 + 4) * 5"}) == "35"
    assert demo.calculator.invoke({"expression": "144 / 12"}) == "12"

    class R:
        def __init__(self, scorer_id: str, score: float | None) -> None:
            self.scorer_id, self.score = scorer_id, score

    rows = demo.summarize([R("a", 1.0), R("a", 0.0), R("a", None), R("b", None)])
    assert rows == [("a", 3, 0.5, 0.0, 1.0, 1), ("b", 1, None, None, None, 1)]
    assert "failures" in demo.format_table(rows)
