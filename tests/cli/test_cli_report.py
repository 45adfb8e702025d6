"""`agentevals report`: per scorer, per entity and per day, counting failures; on a hand-made DB with the
contract schema, and on DBs written by SQLiteSink from run_evals and from the live ScoringEngine."""

from __future__ import annotations

import json
import sqlite3
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agentevals import Run, ScoreResult, ScoringEngine, arun_evals, create_scorer
from agentevals._evals._report import build_report, parse_since
from agentevals._store._row import COLUMNS
from agentevals.cli import main
from agentevals.scorers import create_exact_match_scorer
from agentevals.sinks import SQLiteSink

ROWS = [  # created_at, scorer, entity, source, score, tokens, cost, error_type
    ("2026-11-20T09:00:00+00:00", "relevancy", "support-agent", "live", 0.8, 100, 0.002, None),
    ("2026-11-20T10:00:00+00:00", "relevancy", "support-agent", "live", 0.6, 100, 0.002, None),
    ("2026-11-21T08:00:00+00:00", "relevancy", "support-agent", "live", None, 50, None, "TimeoutError"),
    ("2026-11-21T09:00:00+00:00", "exact_match", "batch", "eval", 1.0, 0, None, None),
    ("2026-11-21T09:00:01+00:00", "exact_match", "batch", "eval", 0.0, 0, None, None),
]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "scores.db"
    SQLiteSink(path).check()  # the store's tables, rows written below by hand
    with sqlite3.connect(path) as conn:
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
                outcome="failed" if error else "scored",
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
    assert "the file does not exist" in capsys.readouterr().err
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
    assert build_report(path, source="eval").total == 2
    assert main(["report", "--db", str(path), "--source", "live"]) == 0
    assert "2 records, 0 failures" in capsys.readouterr().out


async def test_replay_command_moves_dead_letters_into_the_db(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
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


# -- coverage, worst runs, store addresses ----------------------------------------------------------


def _records() -> list[Any]:
    """Four runs: 'a' scores three (0.9, 0.2, 0.5), 'b' skips two and fails one, 'c' scores one 0.0 and
    skips the fourth run."""
    from agentevals.results import ScoreFailure, ScoreResult, ScoreSkipped

    def common(i: int) -> dict[str, Any]:
        return {
            "run_id": f"run{i}",
            "entity": "bot",
            "source": "live",
            "input": f"question {i}: " + "why? " * 40,
            "output": f"answer {i}",
            "created_at": datetime(2026, 11, 20, 9, i, tzinfo=UTC),
        }

    records: list[Any] = [
        ScoreResult(scorer_id="a", scorer_name="a", score=s, reason=f"reason {s}", **common(i))
        for i, s in enumerate((0.9, 0.2, 0.5))
    ]
    records += [
        ScoreSkipped(scorer_id="b", scorer_name="b", skip_reason="no_ground_truth", reason="-", **common(0)),
        ScoreSkipped(scorer_id="b", scorer_name="b", skip_reason="no_ground_truth", reason="-", **common(2)),
        ScoreFailure(
            scorer_id="b", scorer_name="b", error_type="TimeoutError", error_message="x", **common(1)
        ),
        ScoreResult(scorer_id="c", scorer_name="c", score=0.0, **common(2)),
        ScoreSkipped(scorer_id="c", scorer_name="c", skip_reason="no_context", reason="-", **common(3)),
    ]
    return records


def _check_coverage_and_worst(report: Any) -> None:
    assert report.runs == 4 and report.total == 8
    cover = {c.scorer_id: c for c in report.coverage}
    a, b, c = cover["a"], cover["b"], cover["c"]
    assert (a.rows, a.scored, a.failed, a.skipped, a.runs, a.share) == (3, 3, 0, 0, 3, 0.75)
    assert (b.rows, b.scored, b.failed, b.skipped, b.skip_reasons) == (3, 0, 1, 2, {"no_ground_truth": 2})
    assert (c.runs, c.store_runs, c.skip_reasons) == (2, 4, {"no_context": 1})
    assert [(w.scorer_id, w.score, w.run_id) for w in report.worst[:3]] == [
        ("c", 0.0, "run2"),
        ("a", 0.2, "run1"),
        ("a", 0.5, "run2"),
    ]
    low = report.worst[1]
    assert (low.entity, low.reason) == ("bot", "reason 0.2") and low.created_at.startswith("2026-11-20T09:01")
    assert low.input is not None and low.input.startswith("question 1: why?") and low.input.endswith("…")
    assert len(low.input) == 120


async def test_coverage_per_scorer_and_worst_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "agentevals.db"
    sink = SQLiteSink(path)
    await sink.write(_records())
    await sink.close()
    _check_coverage_and_worst(build_report(path))
    assert [w.score for w in build_report(path, worst=2).worst] == [0.0, 0.2]
    assert main(["report", "--db", str(path)]) == 0
    out = capsys.readouterr().out
    for text in ("coverage", "no_ground_truth ×2", "75%", "worst runs", "question 2: why?", "reason 0.2"):
        assert text in out
    assert main(["report", "--db", str(path), "--json", "--worst", "2"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["runs"] == 4 and [w["run_id"] for w in data["worst"]] == ["run2", "run1"]
    assert main(["report", "--db", str(path), "--worst", "0"]) == 0
    assert "worst runs" not in capsys.readouterr().out
    assert main(["report", "--db", str(path), "--worst", "-1"]) == 2
    assert "--worst must be 0 or more" in capsys.readouterr().err
    assert {c["scorer_id"]: c["share"] for c in data["coverage"]} == {"a": 0.75, "b": 0.75, "c": 0.5}


async def test_a_since_inside_an_hour_reads_the_rest_of_that_hour_from_the_rows(tmp_path: Path) -> None:
    """The rollup holds whole hours: from 09:02 the report counts 09:02-09:59 from the score rows and
    11:00 on from the rollup, and nothing before 09:02."""
    from agentevals.results import ScoreResult

    path = tmp_path / "agentevals.db"
    sink = SQLiteSink(path)
    later = ScoreResult(
        scorer_id="a", scorer_name="a", score=1.0, run_id="run4", entity="bot", source="live",
        input="q", output="a", created_at=datetime(2026, 11, 20, 11, 15, tzinfo=UTC),
    )  # fmt: skip
    await sink.write([*_records(), later])
    await sink.close()
    report = build_report(path, since=datetime(2026, 11, 20, 9, 2, tzinfo=UTC))
    assert report.total == 5
    assert [(g.key["scorer_id"], g.count, g.failures, g.mean) for g in report.by_scorer] == [
        ("a", 2, 0, 0.75),
        ("b", 1, 0, None),
        ("c", 2, 0, 0.0),
    ]
    cover = {c.scorer_id: (c.rows, c.scored, c.skipped, c.skip_reasons) for c in report.coverage}
    assert cover["c"] == (2, 1, 1, {"no_context": 1})
    on_the_hour = build_report(path, since=datetime(2026, 11, 20, 10, tzinfo=UTC))
    assert [(g.key["scorer_id"], g.count) for g in on_the_hour.by_scorer] == [("a", 1)]


def test_a_file_that_is_not_a_store_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a database, just some notes\n" * 10)
    assert main(["report", "--db", str(text)]) == 2
    assert "is not a SQLite database" in capsys.readouterr().err
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE things (x)")
    assert main(["report", "--db", str(other)]) == 2
    assert "has no 'agentevals_scores' table" in capsys.readouterr().err
    broken = tmp_path / "broken.db"
    broken.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    assert main(["report", "--db", str(broken)]) == 2
    assert "agentevals report: error:" in capsys.readouterr().err
    with pytest.raises(ValueError, match="--worst must be 0 or more"):
        build_report(other, worst=-1)
    pytest.importorskip("psycopg")
    url = "postgresql://me:s3cret@127.0.0.1:1/test?connect_timeout=1"
    assert main(["report", "--db", url]) == 2
    err = capsys.readouterr().err
    assert "postgresql://me:***@127.0.0.1:1/test" in err and "cannot connect" in err and "s3cret" not in err


async def test_report_on_postgres(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, postgres: Any
) -> None:
    import psycopg

    from agentevals.sinks import PostgresSink

    url = postgres.url
    table = f"agentevals_report_{uuid.uuid4().hex[:10]}"
    try:
        sink = PostgresSink(url, table=table)
        await sink.write(_records())
        await sink.close()

        def no_ddl(self: PostgresSink) -> None:
            raise AssertionError("a version-2 store is read as it is (a read-only role can report)")

        monkeypatch.setattr(PostgresSink, "check", no_ddl)
        report = build_report(url, table=table)
        _check_coverage_and_worst(report)
        assert [(g.key["day"], g.key["scorer_id"], g.count) for g in report.by_day] == [
            ("2026-11-20", "a", 3),
            ("2026-11-20", "b", 3),
            ("2026-11-20", "c", 2),
        ]
        since = build_report(url, table=table, since=parse_since("2026-11-20T09:02:00"), source="live")
        assert (since.total, since.runs) == (4, 2)
        assert main(["report", "--db", url, "--table", table, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["total"] == 8
        assert main(["report", "--db", url, "--table", "no_such_table"]) == 2
        assert "has no 'no_such_table' table" in capsys.readouterr().err
    finally:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            for name in (table, f"{table}_runs", f"{table}_meta", f"{table}_rollup"):
                await conn.execute(f"DROP TABLE IF EXISTS {name}")


async def test_replay_into_postgres_and_a_named_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], postgres: Any
) -> None:
    import psycopg

    from agentevals.sinks import DeadLetter, MemorySink

    records = [ScoreResult(scorer_id="s", scorer_name="s", run_id=f"r{i}", score=i / 2) for i in range(3)]

    async def dead_letters(name: str) -> str:
        dead = DeadLetter(tmp_path / name)
        await dead.write(records, MemorySink(), OSError("server down"))
        dead.close()
        return str(tmp_path / name)

    url, table = postgres.url, f"agentevals_replay_{uuid.uuid4().hex[:10]}"
    try:
        assert main(["replay", await dead_letters("pg.jsonl"), "--db", url, "--table", table]) == 0
        assert "replayed 3 records" in capsys.readouterr().out
        async with await psycopg.AsyncConnection.connect(url) as conn:
            cursor = await conn.execute(f"SELECT run_id, score FROM {table} ORDER BY run_id")
            assert await cursor.fetchall() == [("r0", 0.0), ("r1", 0.5), ("r2", 1.0)]
    finally:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            for name in (table, f"{table}_runs", f"{table}_meta", f"{table}_rollup"):
                await conn.execute(f"DROP TABLE IF EXISTS {name}")

    db = tmp_path / "named.db"  # SQLite, a table of its own
    assert main(["replay", await dead_letters("sq.jsonl"), "--db", str(db), "--table", "evals_scores"]) == 0
    assert build_report(db, table="evals_scores").total == 3
    capsys.readouterr()
    assert main(["replay", await dead_letters("bad.jsonl"), "--db", str(db), "--table", "drop table"]) == 2
    assert "invalid table name" in capsys.readouterr().err
    assert (tmp_path / "bad.jsonl").exists()  # nothing sent, nothing lost
    assert main(["replay", str(tmp_path / "bad.jsonl"), "--db", "postgresql://me:pw@127.0.0.1:1/test"]) == 2
    err = capsys.readouterr().err
    assert "cannot connect" in err and ":pw@" not in err


async def test_worst_runs_show_an_agent_inputs_user_message(tmp_path: Path) -> None:
    """An agent's stored input is JSON with its system prompt and messages: the worst-runs list shows the
    user's words, however long the system prompt before them."""
    from agentevals.results import ScoreResult

    agent_input = {
        "system_messages": [{"role": "system", "content": "You answer questions. " * 60}],
        "input_messages": [{"role": "user", "content": "Who wrote Hamlet?", "id": "m-1"}],
    }
    path = tmp_path / "agentevals.db"
    sink = SQLiteSink(path)
    await sink.write(
        [ScoreResult(scorer_id="a", scorer_name="a", score=0.0, run_id="r1", input=agent_input, output="?")]
    )
    await sink.close()
    assert [w.input for w in build_report(path).worst] == ["Who wrote Hamlet?"]
