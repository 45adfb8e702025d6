"""`agentevals report`: per scorer, per entity and per day, counting failures; on a hand-made DB with the
contract schema, and on DBs written by SQLiteSink from run_evals and from the live ScoringEngine."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentevals import Run, ScoringEngine, arun_evals, create_scorer
from agentevals._evals._report import build_report, parse_since
from agentevals.cli import main
from agentevals.scorers import create_exact_match_scorer
from agentevals.sinks import SQLiteSink

COLUMNS = (
    "id",
    "created_at",
    "scorer_id",
    "scorer_name",
    "run_id",
    "trace_id",
    "entity",
    "source",
    "score",
    "reason",
    "input",
    "output",
    "ground_truth",
    "request_context",
    "preprocess_step_result",
    "analyze_step_result",
    "generate_score_step_result",
    "preprocess_prompt",
    "analyze_prompt",
    "generate_score_prompt",
    "generate_reason_prompt",
    "judge_model",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "duration_ms",
    "error_type",
    "error_message",
    "failed_step",
    "metadata",
)

ROWS = [  # created_at, scorer, entity, source, score, tokens, cost, error_type
    ("2026-11-20T09:00:00+00:00", "relevancy", "support-agent", "live", 0.8, 100, 0.002, None),
    ("2026-11-20T10:00:00+00:00", "relevancy", "support-agent", "live", 0.6, 100, 0.002, None),
    ("2026-11-21T08:00:00+00:00", "relevancy", "support-agent", "live", None, 50, None, "TimeoutError"),
    ("2026-11-21T09:00:00+00:00", "exact_match", "batch", "test", 1.0, 0, None, None),
    ("2026-11-21T09:00:01+00:00", "exact_match", "batch", "test", 0.0, 0, None, None),
]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "scores.db"
    with sqlite3.connect(path) as conn:
        conn.execute(f"CREATE TABLE agentevals_scores ({', '.join(COLUMNS)})")
        for n, (created, scorer, entity, source, score, tokens, cost, error) in enumerate(ROWS):
            row = dict.fromkeys(COLUMNS)
            row.update(
                id=str(n),
                created_at=created,
                scorer_id=scorer,
                scorer_name=scorer,
                run_id=f"r{n}",
                entity=entity,
                source=source,
                score=score,
                prompt_tokens=tokens,
                completion_tokens=0,
                cost_usd=cost,
                error_type=error,
                metadata="{}",
            )
            conn.execute(
                f"INSERT INTO agentevals_scores VALUES ({', '.join('?' * len(COLUMNS))})", list(row.values())
            )
    return path


def test_report_groups_per_scorer_entity_and_day(db: Path) -> None:
    report = build_report(db)
    assert (report.total, report.failures) == (5, 1)
    relevancy = next(g for g in report.by_scorer if g.key["scorer_id"] == "relevancy")
    assert (relevancy.count, relevancy.failures) == (3, 1) and relevancy.mean == pytest.approx(0.7)
    assert relevancy.stdev == pytest.approx(0.1414, abs=1e-4) and (relevancy.min, relevancy.max) == (0.6, 0.8)
    assert relevancy.tokens == 250 and relevancy.cost_usd == pytest.approx(0.004)
    assert relevancy.top_error == "TimeoutError ×1"
    assert [(g.key["entity"], g.key["scorer_id"], g.count) for g in report.by_entity] == [
        ("batch", "exact_match", 2),
        ("support-agent", "relevancy", 3),
    ]
    assert [(g.key["day"], g.key["scorer_id"], g.count, g.failures) for g in report.by_day] == [
        ("2026-11-20", "relevancy", 2, 0),
        ("2026-11-21", "exact_match", 2, 0),
        ("2026-11-21", "relevancy", 1, 1),
    ]


def test_since_and_source_filter(db: Path) -> None:
    since = build_report(db, since=parse_since("2026-11-21"))
    assert since.total == 3 and {g.key["day"] for g in since.by_day} == {"2026-11-21"}
    live = build_report(db, source="live")
    assert [g.key["scorer_id"] for g in live.by_scorer] == ["relevancy"]
    now = datetime(2026, 11, 21, 9, 30, tzinfo=UTC)
    assert parse_since("1h", now=now) == datetime(2026, 11, 21, 8, 30, tzinfo=UTC)
    assert parse_since("2d", now=now) == datetime(2026, 11, 19, 9, 30, tzinfo=UTC)


def test_report_command_prints_tables(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "5 records, 1 failures" in out
    for text in (
        "per scorer",
        "per entity",
        "per day (UTC)",
        "support-agent",
        "2026-11-20",
        "TimeoutError ×1",
    ):
        assert text in out
    assert main(["report", "--db", str(db), "--since", "2026-11-21T08:30:00", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["total"] == 2 and data["failures"] == 0


def test_report_usage_errors_exit_2(tmp_path: Path, db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--db", str(tmp_path / "none.db")]) == 2
    assert "no database at" in capsys.readouterr().err
    sqlite3.connect(tmp_path / "empty.db").close()
    assert main(["report", "--db", str(tmp_path / "empty.db")]) == 2
    assert "has no 'agentevals_scores' table" in capsys.readouterr().err
    assert main(["report", "--db", str(db), "--since", "last tuesday"]) == 2
    assert "7d, 24h" in capsys.readouterr().err


async def test_report_on_records_written_by_the_engine_and_run_evals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agentevals.db"
    short = create_scorer(id="short").generate_score(lambda run, **_: float(len(run.output_text) < 10))
    engine = ScoringEngine([short], sinks=[SQLiteSink(path)], entity="live-agent")
    for text in ("ok", "a much longer answer"):
        assert engine.submit(Run(input="q", output=text))
    assert await engine.ashutdown()

    def target(text: str) -> str:
        if text == "boom":
            raise RuntimeError("target exploded")
        return text.upper()

    sink = SQLiteSink(path)
    data = [{"input": "a", "ground_truth": "A"}, {"input": "boom", "ground_truth": "B"}]
    await arun_evals(data, [create_exact_match_scorer()], target, sinks=[sink], progress=False)
    await sink.close()

    report = build_report(path)
    assert (report.total, report.failures) == (4, 1)
    groups = {(g.key["entity"], g.key["scorer_id"]): g for g in report.by_entity}
    assert groups[("live-agent", "short")].mean == 0.5
    assert (groups[("target", "exact_match")].count, groups[("target", "exact_match")].failures) == (2, 1)
    assert build_report(path, source="test").total == 2
    assert main(["report", "--db", str(path), "--source", "live"]) == 0
    assert "2 records, 0 failures" in capsys.readouterr().out


async def test_replay_command_moves_dead_letters_into_the_db(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentevals import ScoreResult
    from agentevals.sinks import DeadLetter, MemorySink

    dead = DeadLetter(tmp_path / "dead.jsonl")
    records = [ScoreResult(scorer_id="s", scorer_name="s", run_id=f"r{i}", score=i / 2) for i in range(3)]
    await dead.write(records, MemorySink(), OSError("db locked"))
    dead.close()

    db = tmp_path / "agentevals.db"
    assert main(["replay", str(tmp_path / "dead.jsonl"), "--db", str(db)]) == 0
    assert "replayed 3 records" in capsys.readouterr().out
    assert not (tmp_path / "dead.jsonl").exists()
    assert build_report(db).by_scorer[0].mean == pytest.approx(0.5)
    assert main(["replay", str(tmp_path / "dead.jsonl"), "--db", str(db)]) == 2
