"""What the viewer reads beside the scores (schema version 4): each scorer's pass threshold as the store
keeps it (or as ``--pass-threshold`` overrides it), the runs the engine dropped, the judges' replies."""

from __future__ import annotations

import asyncio
import re
import threading
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from agentevals import Run, ScoreResult, ScoringEngine, create_scorer
from agentevals._store._row import tables
from agentevals._support._sync import run_sync
from agentevals._view import _cli, _pages
from agentevals._view._app import create_app
from agentevals._view._queries import Filters, Reader
from agentevals._view._report_html import write_report
from agentevals._view._thresholds import Bound
from agentevals.engine import DeliveryOptions, ExitOptions, QueueOptions, ScoringOptions
from agentevals.sinks import PostgresSink, SQLiteSink
from tests.view.conftest import (
    NOW,
    REPLY,
    XSS,
    catalog_records,
    generated_records,
    write_catalog,
    write_store,
)


@pytest.fixture(scope="module")
def records() -> list[Any]:
    return catalog_records()


@pytest.fixture(scope="module")
def store(catalog_store: Path) -> Path:
    return catalog_store


def _pass_rate(records: list[Any], scorer_id: str, low: float, high: float, eval_id: Any = ...) -> float:
    """Scores within the bounds out of the records scored or failed (a failure counts as not passed)."""
    judged = [
        r
        for r in records
        if r.scorer_id == scorer_id and r.outcome != "skipped" and (eval_id is ... or r.eval_id == eval_id)
    ]
    passed = [
        r for r in judged if isinstance(r, ScoreResult) and r.score is not None and low <= r.score <= high
    ]
    return len(passed) / len(judged)


def _by_id(overview: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["id"]: s for s in overview["scorers"]}


def test_thresholds_come_from_the_store_unless_given(store: Path, records: list[Any]) -> None:
    with Reader(store) as reader:
        from agentevals._evals._catalog import stored_scorers
        from agentevals._view._thresholds import in_scope

        stored = in_scope(reader.with_store(stored_scorers), None)
        scorers = _by_id(_pages.overview(reader, Filters(), _pages.Settings().scoped(stored)))
        assert scorers["faithfulness"]["threshold"] == Bound(0.7, None, "stored")
        assert scorers["tone"]["threshold"] == Bound(None, 0.8, "stored")  # a maximum: the row path
        assert scorers["exact_match"]["threshold"] == Bound(0.5, None, "default")
        assert scorers["faithfulness"]["pass_rate"] == pytest.approx(
            _pass_rate(records, "faithfulness", 0.7, 9)
        )
        assert scorers["tone"]["pass_rate"] == pytest.approx(_pass_rate(records, "tone", -9, 0.8))
        assert scorers["tone"]["pass_rate"] < _pass_rate(records, "tone", 0.5, 9)
        tone = _pages.scorer(reader, "tone", Filters(), "day", _pages.Settings().scoped(stored))
        assert tone["summary"]["pass_rate"] == pytest.approx(scorers["tone"]["pass_rate"])

        one = _cli.settings(["faithfulness=0.6"]).scoped(stored)  # type: ignore[attr-defined]
        scorers = _by_id(_pages.overview(reader, Filters(), one))
        assert scorers["faithfulness"]["threshold"] == Bound(0.6, None, "--pass-threshold")
        assert scorers["faithfulness"]["pass_rate"] == pytest.approx(
            _pass_rate(records, "faithfulness", 0.6, 9)
        )
        assert scorers["tone"]["threshold"] == Bound(None, 0.8, "stored")

        every = _cli.settings(["0.4"]).scoped(stored)  # type: ignore[attr-defined]
        scorers = _by_id(_pages.overview(reader, Filters(), every))
        assert {s["threshold"] for s in scorers.values()} == {Bound(0.4, None, "--pass-threshold")}
        assert scorers["tone"]["pass_rate"] == pytest.approx(_pass_rate(records, "tone", 0.4, 9))


def test_the_pages_show_each_threshold_and_its_origin(store: Path, records: list[Any]) -> None:
    client = TestClient(create_app(store, warm=False))
    page = client.get("/").text
    row = re.search(r'data-scorer="faithfulness".*?</tr>', page, re.S).group(0)  # type: ignore[union-attr]
    assert "≥ 0.7" in row and 'data-origin="stored"' in row
    assert f"{_pass_rate(records, 'faithfulness', 0.7, 9) * 100:.1f}%" in row
    tone = re.search(r'data-scorer="tone".*?</tr>', page, re.S).group(0)  # type: ignore[union-attr]
    assert "≤ 0.8" in tone and 'data-origin="stored"' in tone
    exact = re.search(r'data-scorer="exact_match".*?</tr>', page, re.S).group(0)  # type: ignore[union-attr]
    assert "≥ 0.5" in exact and 'data-origin="default"' in exact
    # an evaluation's own threshold when it is filtered
    evaluated = client.get("/?eval=eval-b").text
    row = re.search(r'data-scorer="faithfulness".*?</tr>', evaluated, re.S).group(0)  # type: ignore[union-attr]
    assert "≥ 0.9" in row
    expected = _pass_rate(records, "faithfulness", 0.9, 9, eval_id="eval-b")
    assert f"{expected * 100:.1f}%" in row
    assert "≥ 0.9" in client.get("/scorers/faithfulness?eval=eval-b").text
    assert "≤ 0.8" in client.get("/scorers/tone").text
    # the command line overrides what is stored
    given = TestClient(create_app(store, warm=False, settings=_cli.settings(["faithfulness=0.25"])))  # type: ignore[arg-type]
    row = re.search(r'data-scorer="faithfulness".*?</tr>', given.get("/").text, re.S).group(0)  # type: ignore[union-attr]
    assert "≥ 0.25" in row and 'data-origin="--pass-threshold"' in row


def test_report_html_uses_the_evaluations_thresholds(store: Path, tmp_path: Path) -> None:
    out = write_report(store, tmp_path / "r.html", filters=Filters(eval_id="eval-b"))
    page = out.read_text()
    row = re.search(r'data-scorer="faithfulness".*?</tr>', page, re.S).group(0)  # type: ignore[union-attr]
    assert "≥ 0.9" in row and 'data-origin="stored"' in row
    assert 'data-dropped="faithfulness"' in row and "—" in row  # drops belong to no evaluation


def test_dropped_runs_under_the_overviews_filters(store: Path) -> None:
    client = TestClient(create_app(store, warm=False))

    def dropped(query: str) -> dict[str, str]:
        text = client.get(f"/fragments/overview{query}").text
        part = text[text.index('id="dropped-runs"') :]
        return {
            k: re.sub(r"<[^>]+>|\s", "", v)
            for k, v in re.findall(r'data-dropped="([^"]+)">(.*?)</span>\n', part)
        }

    assert dropped("") == {"exact_match": "0", "faithfulness": "7", "tone": "2"}
    assert dropped("?entity=support_agent") == {"exact_match": "0", "faithfulness": "4", "tone": "0"}
    since = (NOW - timedelta(days=5)).date().isoformat()
    assert dropped(f"?since={since}")["faithfulness"] == "4"
    assert set(dropped("?eval=eval-a").values()) == {"—"}
    page = client.get("/").text
    assert 'data-dropped="tone"' in page and ">dropped</th>" in page
    with Reader(store) as reader:
        inline = _by_id(_pages.overview(reader, Filters(entity="billing_agent"), _pages.Settings()))
        assert (inline["faithfulness"]["dropped"], inline["tone"]["dropped"]) == (3, 2)


def _gated(gate: threading.Event, scorer_id: str) -> Any:
    async def score(run: Run) -> float:
        while not gate.is_set():
            await asyncio.sleep(0.005)
        return 1.0

    return create_scorer(id=scorer_id).generate_score(score)


def test_dropped_column_equals_the_engines_stats(tmp_path: Path) -> None:
    """A ``ScoringEngine`` whose queue overflows: the overview's dropped column says what ``stats()`` did."""
    db, gate = tmp_path / "live.db", threading.Event()
    engine = ScoringEngine(
        {"a": {"scorer": _gated(gate, "a"), "threshold": 0.7}},
        sinks=[SQLiteSink(db)],
        queue=QueueOptions(size=3, linger=0.0),
        scoring=ScoringOptions(max_concurrency=1),
        delivery=DeliveryOptions(linger=0.0, dead_letter=tmp_path / "dead.jsonl"),
        exit=ExitOptions(handle_sigterm=False),
    )
    runs = [Run(run_id=f"run-{i}", input=f"q {i}", output="a", entity=f"bot-{i % 2}") for i in range(40)]
    accepted = [engine.submit(run) for run in runs]
    gate.set()
    assert engine.flush(timeout=30)
    stats = engine.stats()
    engine.shutdown()
    refused = [run for run, ok in zip(runs, accepted, strict=True) if not ok]
    assert refused and stats.dropped_overflow == len(refused)
    client = TestClient(create_app(db, warm=False))
    fragment = client.get("/fragments/overview").text
    assert re.search(rf'data-dropped="a"><span class="bad">{stats.dropped_overflow}</span>', fragment)
    mine = sum(1 for run in refused if run.entity == "bot-1")
    fragment = client.get("/fragments/overview?entity=bot-1").text
    assert re.search(rf'data-dropped="a">(<span class="bad">)?{mine}(</span>)?\n?</span>', fragment)
    assert 'data-origin="stored"' in client.get("/").text  # the engine's threshold, as it stored it


def test_the_run_page_shows_each_judge_reply_escaped(store: Path) -> None:
    page = TestClient(create_app(store, warm=False)).get("/runs/run-replied").text
    assert page.count("reply received") == 2
    assert XSS not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    with Reader(store) as reader, reader.session() as q:
        steps = {s["name"]: s for s in _pages.run(q, "run-replied")["records"][0]["steps"]}  # type: ignore[index]
    assert steps["analyze"]["reply"] == REPLY and steps["generate_score"]["reply"] == "0.4"


def test_records_without_judge_replies_show_their_prompts(tmp_path: Path) -> None:
    import sqlite3

    path = write_store(tmp_path / "scores.db", generated_records(runs=30))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE agentevals_scores SET judge_replies = NULL")
    with Reader(path) as reader, reader.session() as q:
        record = _pages.run(q, "run-00003")["records"][0]  # type: ignore[index]
    assert record["judge_replies"] is None or record["judge_replies"] in ({}, "{}")
    assert all(step["reply"] is None for step in record["steps"])
    page = TestClient(create_app(path, warm=False)).get("/runs/run-00003")
    assert page.status_code == 200 and "prompt sent" in page.text and "reply received" not in page.text


def test_postgres_shows_the_catalog_as_sqlite_does(postgres: Any, store: Path, records: list[Any]) -> None:
    import psycopg

    table = f"agentevals_view_{uuid.uuid4().hex[:10]}"

    async def write() -> None:
        sink = PostgresSink(postgres.url, table=table)
        try:
            await sink.write(records)
        finally:
            await sink.close()
        await write_catalog(PostgresSink(postgres.url, table=table))

    try:
        run_sync(write())
        seen = []
        for address, name in ((store, "agentevals_scores"), (postgres.url, table)):
            client = TestClient(create_app(address, table=name, warm=False))
            page = client.get("/").text
            rows = {
                scorer_id: re.sub(r"\s+", " ", row)
                for scorer_id, row in re.findall(r'<tr data-scorer="([^"]+)">(.*?)</tr>', page, re.S)
            }
            fragment = client.get("/fragments/overview?entity=billing_agent").text
            run = client.get("/runs/run-replied").text
            with Reader(address, table=name) as reader, reader.session() as q:
                steps = _pages.run(q, "run-replied")["records"][0]["steps"]  # type: ignore[index]
            seen.append(
                {
                    "thresholds": {
                        k: re.search(r'class="sub threshold">(.*?)</div>', v).group(1)
                        for k, v in rows.items()
                    },  # type: ignore[union-attr]
                    "pass rates": {k: re.search(r"([\d.]+%)", v).group(1) for k, v in rows.items()},  # type: ignore[union-attr]
                    "dropped": re.findall(r'data-dropped="([^"]+)">(.*?)</span>\n', fragment),
                    "replies": [(s["name"], s["reply"]) for s in steps],
                    "escaped": XSS not in run and run.count("reply received"),
                }
            )
        assert seen[0] == seen[1]
        assert seen[0]["replies"] == [("analyze", REPLY), ("generate_score", "0.4")]
        assert "≥ 0.7" in seen[0]["thresholds"]["faithfulness"]
    finally:
        t = tables(table)
        with psycopg.connect(postgres.url, autocommit=True) as conn:
            for name in (t.scores, t.runs, t.meta, t.rollup, t.bins, t.scorers, t.drops):
                conn.execute(f"DROP TABLE IF EXISTS {name} CASCADE")
