"""``store_runs="all"``: a ``ScoringEngine`` stores every run it was offered, also those no scorer sampled
(runs rows only, with the engine's entity and redaction), in SQLite (a real file) and PostgreSQL (the real
server on 127.0.0.1:5432); ``"sampled"`` stores only the scored ones; report coverage tells them apart."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentevals import Run, ScoreRecord, ScoringEngine, create_scorer
from agentevals._evals._report import build_report
from agentevals.cli import main
from agentevals.engine import QueueOptions
from agentevals.sinks import PostgresSink, SQLiteSink

RUNS = 40


def _engine(sink: Any, **options: Any) -> ScoringEngine:
    scorer = create_scorer(id="half").generate_score(lambda **_: 1.0)
    scorers = {"half": {"scorer": scorer, "sampling": {"type": "ratio", "rate": 0.5}}}
    return ScoringEngine(scorers, sinks=[sink], queue=QueueOptions(linger=0.05), entity="bot", **options)


def _offer(engine: ScoringEngine) -> int:
    """Offer the runs (every fourth one lazily); the number the scorer sampled."""
    sampled = 0
    for i in range(RUNS):
        run = Run(run_id=f"run-{i:02d}", input=f"secret question {i}", output=f"answer {i}")
        if i % 4 == 0:
            sampled += engine.submit_lazy(lambda run=run: run, run_id=run.run_id)
        else:
            sampled += engine.submit(run)
    assert engine.shutdown(timeout=30).completed
    return sampled


def _hide(record: ScoreRecord) -> ScoreRecord:
    return record.model_copy(update={"input": str(record.input).replace("secret", "[hidden]")})


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_sqlite_all_stores_every_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "all.db"
    sampled = _offer(_engine(SQLiteSink(db, store_runs="all"), redact=_hide))
    assert 0 < sampled < RUNS  # some runs were sampled out
    runs = _rows(db, "SELECT run_id, entity, source, input, output FROM agentevals_runs ORDER BY run_id")
    assert [r[0] for r in runs] == [f"run-{i:02d}" for i in range(RUNS)]
    assert all(r[1:3] == ("bot", "live") for r in runs)
    assert all("[hidden] question" in r[3] and "secret" not in r[3] for r in runs)  # redacted, scored or not
    assert runs[7][4] == '"answer 7"'
    scores = _rows(db, "SELECT scorer_id, COUNT(*) FROM agentevals_scores GROUP BY scorer_id")
    assert scores == [("half", sampled)]  # no score rows for the unscored runs

    coverage = build_report(db).coverage[0]
    assert (coverage.store_runs, coverage.runs, coverage.scored) == (RUNS, sampled, sampled)
    assert main(["report", "--db", str(db)]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert f"coverage ({RUNS} runs seen in the store)" in printed and "sampled" in printed


def test_sqlite_sampled_stores_only_scored_runs(tmp_path: Path) -> None:
    db = tmp_path / "sampled.db"
    sampled = _offer(_engine(SQLiteSink(db)))
    assert _rows(db, "SELECT COUNT(*) FROM agentevals_runs") == [(sampled,)]
    assert build_report(db).coverage[0].share == 1.0


def test_store_runs_is_validated() -> None:
    with pytest.raises(ValueError, match="'all' \\(every run, scored or not\\)"):
        SQLiteSink("x.db", store_runs="every")  # type: ignore[arg-type]


@pytest.fixture
def pg_table(postgres: Any) -> Iterator[tuple[str, str]]:
    import psycopg

    table = f"agentevals_allruns_{uuid.uuid4().hex[:10]}"
    yield postgres.url, table
    with psycopg.connect(postgres.url, autocommit=True) as conn:
        for name in (table, f"{table}_runs", f"{table}_meta", f"{table}_rollup"):
            conn.execute(f"DROP TABLE IF EXISTS {name}")


def test_postgres_all_stores_every_run(pg_table: tuple[str, str]) -> None:
    import psycopg

    url, table = pg_table
    sampled = _offer(_engine(PostgresSink(url, table=table, store_runs="all")))
    with psycopg.connect(url) as conn:
        runs = conn.execute(f"SELECT run_id, input FROM {table}_runs ORDER BY run_id").fetchall()
        scores = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
    assert [r[0] for r in runs] == [f"run-{i:02d}" for i in range(RUNS)]
    assert runs[3][1] == "secret question 3" and scores == (sampled,)
    coverage = build_report(url, table=table).coverage[0]
    assert (coverage.store_runs, coverage.runs) == (RUNS, sampled)
