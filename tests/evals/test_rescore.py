"""Re-scoring stored runs: runs stored by a live ``ScoringEngine`` are read back from SQLite (a real file)
and PostgreSQL (a real server on 127.0.0.1:5432, database ``test``), scored by new scorers, and the
records stored in the same store with source ``rescore``."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentevals import Run, ScoringEngine, create_scorer
from agentevals._evals._rescore import arescore
from agentevals._scoring._scorer import Scorer
from agentevals._store._store import open_store
from agentevals.engine import QueueOptions
from agentevals.evals import RescoreSummary, rescore
from agentevals.sinks import PostgresSink, SQLiteSink
from agentevals.steps import PromptStep
from agentevals.testing import FakeJudgeServer, Reply

ANSWERS = {f"run-{i}": f"answer {i}" for i in range(6)}
ENTITIES = {"run-0": "billing", "run-1": "billing"}  # the others: "support"


def _runs() -> list[Run]:
    runs = [
        Run.from_messages(
            [
                {"role": "system", "content": "You are helpful."},
                {"role": "user", "content": f"question {i}"},
                {"role": "assistant", "content": ANSWERS[f"run-{i}"]},
            ],
            run_id=f"run-{i}",
            entity=ENTITIES.get(f"run-{i}", "support"),
            ground_truth=ANSWERS[f"run-{i}"],
            context=[f"doc {i}"],
            metadata={"usage": {"input_tokens": 10 + i}},
        )
        for i in range(5)
    ]
    failed = Run(run_id="run-5", input="question 5", output=None, entity="support", error="boom")
    return [*runs, failed]


def _live_scorer() -> Scorer:
    return create_scorer(id="length").generate_score(lambda run, **_: min(1.0, len(run.output_text) / 10))


def _answer_scorer(seen: list[Run] | None = None) -> Scorer:
    """Scores 1.0 when the run's stored output is the answer it was given (the transcript is intact)."""

    def score(run: Run, **_: Any) -> float:
        if seen is not None:
            seen.append(run)
        return 1.0 if run.output_text == ANSWERS[run.run_id] else 0.0

    return create_scorer(id="answer", version="1").generate_score(score)


def _store_live(sink: Any) -> None:
    engine = ScoringEngine(_live_scorer(), sinks=[sink], queue=QueueOptions(linger=0))
    for run in _runs():
        assert engine.submit(run)
    assert engine.shutdown(timeout=30)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "scores.db"
    _store_live(SQLiteSink(path))
    return path


def _rows(db: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, params).fetchall()


def test_every_stored_run_is_rescored_once(db: Path) -> None:
    runs_before = _rows(db, "SELECT * FROM agentevals_runs ORDER BY run_id")
    seen: list[Run] = []
    summary = rescore(str(db), [_answer_scorer(seen)], progress=False)
    assert summary == RescoreSummary(runs=6, scored=5, skipped=1)
    assert sorted(run.run_id for run in seen) == [f"run-{i}" for i in range(5)]  # the failed run: skipped
    first = next(run for run in seen if run.run_id == "run-0")
    assert first.system_messages[0].content == "You are helpful."
    assert (first.input_text, first.context, first.entity) == ("question 0", ["doc 0"], "billing")
    assert first.metadata["usage"] == {"input_tokens": 10}
    rows = _rows(
        db,
        "SELECT run_id, outcome, score, source, skip_reason FROM agentevals_scores "
        "WHERE scorer_id = 'answer' ORDER BY run_id",
    )
    assert rows == [
        *[(f"run-{i}", "scored", 1.0, "rescore", None) for i in range(5)],
        ("run-5", "skipped", None, "rescore", "run_failed"),
    ]
    assert _rows(db, "SELECT COUNT(*) FROM agentevals_scores WHERE scorer_id = 'length'") == [(6,)]
    assert _rows(db, "SELECT * FROM agentevals_runs ORDER BY run_id") == runs_before  # untouched

    again = rescore(db, _answer_scorer(), progress=False)  # a second re-score adds nothing
    assert again == RescoreSummary(runs=6, already_scored=6)
    assert _rows(db, "SELECT COUNT(*) FROM agentevals_scores") == [(12,)]

    forced = rescore(db, _changed_answer_scorer(), force=True, progress=False)  # the rows are replaced
    assert (forced.scored, forced.skipped, forced.already_scored) == (5, 1, 0)
    assert _rows(db, "SELECT COUNT(*) FROM agentevals_scores") == [(12,)]
    assert _rows(db, "SELECT DISTINCT score, reason FROM agentevals_scores WHERE outcome = 'scored' "
                 "AND scorer_id = 'answer'") == [(0.25, "changed")]  # fmt: skip


def _changed_answer_scorer() -> Scorer:
    """The answer scorer, edited without a new version: its records have the ids of the stored ones."""
    return (
        create_scorer(id="answer", version="1")
        .generate_score(lambda **_: 0.25)
        .generate_reason(lambda **_: "changed")
    )


def test_a_new_scorer_version_is_scored_again(db: Path) -> None:
    rescore(db, _answer_scorer(), progress=False)
    v2 = create_scorer(id="answer", version="2").generate_score(lambda **_: 0.5)
    assert rescore(db, [v2], progress=False).scored == 5
    assert _rows(db, "SELECT scorer_version, COUNT(*) FROM agentevals_scores WHERE scorer_id = 'answer' "
                 "GROUP BY scorer_version ORDER BY 1") == [("1", 6), ("2", 6)]  # fmt: skip


def test_since_entity_and_limit_select_the_runs(db: Path) -> None:
    with sqlite3.connect(db) as conn:  # two runs stored a month ago
        conn.execute(
            "UPDATE agentevals_runs SET created_at = '2000-01-01T00:00:00+00:00' "
            "WHERE run_id IN ('run-2', 'run-3')"
        )
    with open_store(db) as store:
        assert [r.run_id for r in store.runs()][-2:] == ["run-2", "run-3"]  # newest first
        assert store.scored("length", _live_scorer().version) == set(ANSWERS)
    recent = rescore(db, _answer_scorer(), since=timedelta(days=7), progress=False)
    assert recent.runs == 4
    assert {r for (r,) in _rows(db, "SELECT run_id FROM agentevals_scores WHERE scorer_id = 'answer'")} == {
        "run-0", "run-1", "run-4", "run-5"
    }  # fmt: skip
    other = create_scorer(id="other").generate_score(lambda **_: 1.0)
    assert rescore(db, [other], entity="billing", progress=False).runs == 2
    assert _rows(db, "SELECT DISTINCT entity FROM agentevals_scores WHERE scorer_id = 'other'") == [
        ("billing",)
    ]
    third = create_scorer(id="third").generate_score(lambda **_: 1.0)
    assert rescore(db, [third], limit=3, progress=False).runs == 3
    assert rescore(db, [third], limit=0, progress=False).runs == 0


def test_an_llm_judged_scorer_with_retries_and_concurrency(db: Path) -> None:
    class Verdict(BaseModel):
        correct: bool

    with FakeJudgeServer(responder=lambda request: {"correct": True}) as server:
        server.push(Reply.error(500, "overloaded"))  # the judge retries it on its own
        judged = (
            create_scorer(id="judged", judge=server.judge())
            .analyze(
                PromptStep(
                    description="verdict",
                    create_prompt=lambda run, **_: f"Is '{run.output_text}' right for '{run.input_text}'?",
                    output_schema=Verdict,
                )
            )
            .generate_score(lambda results, **_: 1.0 if results.analyze_step_result.correct else 0.0)
        )
        summary = rescore(db, [judged], concurrency=3, progress=False)
        prompts = [str(request.body["messages"]) for request in server.requests]
    assert summary == RescoreSummary(runs=6, scored=5, skipped=1)
    assert any("answer 3" in p and "question 3" in p for p in prompts)  # the judge saw the stored transcript
    rows = _rows(
        db,
        "SELECT COUNT(*), SUM(score), MIN(judge_model) FROM agentevals_scores "
        "WHERE scorer_id = 'judged' AND outcome = 'scored'",
    )
    assert rows[0][:2] == (5, 5.0) and "gpt-4o-mini" in rows[0][2]


def test_errors_are_records_and_stop_keeps_what_is_done(db: Path) -> None:
    def explode(run: Run, **_: Any) -> float:
        raise RuntimeError(f"cannot score {run.run_id}")

    failing = create_scorer(id="failing").generate_score(explode)
    assert rescore(db, [failing], progress=False).failed == 5

    async def stopped() -> RescoreSummary:
        stop = asyncio.Event()
        calls = 0

        async def slow(run: Run, **_: Any) -> float:
            nonlocal calls
            calls += 1
            if calls == 2:
                stop.set()
            await asyncio.sleep(0.01)
            return 1.0

        scorer = create_scorer(id="slow").generate_score(slow)
        return await arescore(db, [scorer], concurrency=1, progress=False, stop=stop)

    summary = asyncio.run(stopped())
    assert summary.interrupted and 1 <= summary.scored < 5
    stored = _rows(db, "SELECT COUNT(*) FROM agentevals_scores WHERE scorer_id = 'slow'")
    assert stored == [(summary.total,)]


def test_bad_arguments_and_addresses(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="the file does not exist"):
        open_store(tmp_path / "missing.db")
    text = tmp_path / "notes.txt"
    text.write_text("not a database " * 100)
    with pytest.raises(ValueError, match="not a SQLite database"):
        open_store(text)
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).execute("CREATE TABLE other (x)").connection.close()
    with pytest.raises(ValueError, match="has no 'agentevals_scores' table"):
        open_store(empty)
    with pytest.raises(ValueError, match="at least one scorer"):
        rescore(text, [], progress=False)
    with pytest.raises(ValueError, match="concurrency"):
        rescore(text, [_answer_scorer()], concurrency=0, progress=False)


# -- PostgreSQL -------------------------------------------------------------------------------------


@pytest.fixture
async def pg(postgres: Any) -> AsyncIterator[tuple[str, str]]:
    import psycopg

    url = postgres.url
    table = f"agentevals_test_{uuid.uuid4().hex[:12]}"
    yield url, table
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        for name in (table, f"{table}_runs", f"{table}_meta", f"{table}_rollup"):
            await conn.execute(f"DROP TABLE IF EXISTS {name}")


async def test_rescore_a_postgres_store(pg: tuple[str, str]) -> None:
    url, table = pg
    await asyncio.to_thread(_store_live, PostgresSink(url, table=table))
    seen: list[Run] = []
    store = await asyncio.to_thread(open_store, url, table=table)
    try:
        summary = await arescore(store, [_answer_scorer(seen)], progress=False)
        assert summary == RescoreSummary(runs=6, scored=5, skipped=1)
        assert {run.output_text for run in seen} == {ANSWERS[f"run-{i}"] for i in range(5)}
        assert await asyncio.to_thread(store.scored, "answer", "1") == set(ANSWERS)
        again = await arescore(store, [_answer_scorer()], progress=False)
        assert again == RescoreSummary(runs=6, already_scored=6)
        billing = create_scorer(id="billing_only").generate_score(lambda **_: 1.0)
        assert (await arescore(store, [billing], entity="billing", limit=1, progress=False)).runs == 1
        forced = await arescore(store, [_changed_answer_scorer()], force=True, progress=False)
        assert (forced.scored, forced.skipped) == (5, 1)
    finally:
        store.close()
    import psycopg

    async with await psycopg.AsyncConnection.connect(url) as conn:  # the forced records replaced the rows
        cursor = await conn.execute(
            f"SELECT outcome, score, reason, COUNT(*) FROM {table} WHERE scorer_id = 'answer' "
            "GROUP BY outcome, score, reason ORDER BY outcome"
        )
        failed = "the run failed (boom); re-scoring scores only runs that succeeded"
        assert await cursor.fetchall() == [("scored", 0.25, "changed", 5), ("skipped", None, failed, 1)]
    with pytest.raises(ValueError, match="has no 'agentevals_absent_table' table"):
        open_store(url, table="agentevals_absent_table")


CTRL_C = """
import asyncio, os, signal, sys, threading
from agentevals import create_scorer
from agentevals._evals import _rescore
from agentevals.evals import rescore

_rescore.BATCH = 1  # each record written at once: the store's writing process is running at the Ctrl-C

async def slow(**_):
    await asyncio.sleep(0.3)
    return 1.0

# As a terminal's Ctrl-C: to the whole process group (the writing process too).
threading.Timer(0.5, lambda: os.killpg(os.getpgid(0), signal.SIGINT)).start()
summary = rescore(sys.argv[1], [create_scorer(id="slow").generate_score(slow)], concurrency=1, progress=False)
print(summary.interrupted, summary.scored)
"""


@pytest.mark.skipif(os.name == "nt", reason="SIGINT to itself is POSIX")
def test_ctrl_c_in_the_sync_face_keeps_what_is_done(db: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CTRL_C, str(db)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        start_new_session=True,  # its own process group, which the Ctrl-C goes to
    )
    assert done.returncode == 0, done.stderr
    interrupted, scored = done.stdout.split()
    assert interrupted == "True" and 1 <= int(scored) < 5, done.stdout
    assert _rows(db, "SELECT COUNT(*) FROM agentevals_scores WHERE scorer_id = 'slow'") == [(int(scored),)]
    assert "Traceback" not in done.stderr


def test_an_unreachable_store_url_does_not_show_its_password() -> None:
    from agentevals._store._store import open_store

    with pytest.raises(ValueError) as info:
        open_store("postgresql://ann:s3cret@127.0.0.1:1/test")
    assert "s3cret" not in str(info.value) and "ann:***@" in str(info.value)
