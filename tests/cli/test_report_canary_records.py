"""Canary records judge labelled runs again: the report and the viewer's pages (unless a source of
``canary`` asks for them) and the judge's raw pass rate beside its agreement leave them out, and the
report and the overview say how many they left out."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from agentevals import ScoreResult
from agentevals._evals._report import build_report
from agentevals._view._app import create_app
from agentevals._view._queries import Reader
from agentevals._view._report_html import write_report
from agentevals.cli import main
from agentevals.evals import Labels, agreement
from agentevals.sinks import PostgresSink, SQLiteSink


def _records() -> list[ScoreResult]:
    """Four live runs, two passing (1.0) and two failing (0.0); a canary epoch judges the two failing
    runs again, as passing, at 12:10 and 12:40 (the second inside the hour a ``since`` cuts)."""

    def record(run: int, score: float, source: Any, minute: int, hour: int = 9) -> ScoreResult:
        return ScoreResult(
            scorer_id="judge", scorer_name="judge", score=score, run_id=f"run{run}", entity="bot",
            source=source, eval_id="epoch-1" if source == "canary" else None, input=f"q{run}",
            output=f"a{run}", created_at=datetime(2026, 11, 20, hour, minute, tzinfo=UTC),
        )  # fmt: skip

    live = [record(i, 1.0 if i < 2 else 0.0, "live", i) for i in range(4)]
    return [*live, record(2, 1.0, "canary", 10, hour=12), record(3, 1.0, "canary", 40, hour=12)]


def _check(address: str, capsys: pytest.CaptureFixture[str], **table: str) -> None:
    report = build_report(address, **table)  # type: ignore[arg-type]
    assert (report.total, report.canary_left_out) == (4, 2)
    judge = next(g for g in report.by_scorer if g.key["scorer_id"] == "judge")
    assert (judge.count, judge.mean) == (4, 0.5)
    cut = build_report(address, since=datetime(2026, 11, 20, 12, 30, tzinfo=UTC), **table)  # type: ignore[arg-type]
    assert (cut.total, cut.canary_left_out) == (0, 1)
    canary = build_report(address, source="canary", **table)  # type: ignore[arg-type]
    assert (canary.total, canary.canary_left_out) == (2, 0)
    extra = [f"--table={table['table']}"] if table else []
    assert main(["report", "--db", address, *extra]) == 0
    out = capsys.readouterr().out
    assert "4 records, 0 failures" in out
    assert "2 canary records left out: they judge labelled runs again (--source canary reports them)" in out
    assert main(["report", "--db", address, "--json", "--source", "canary", *extra]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["total"], data["canary_left_out"]) == (2, 0)


async def test_the_report_leaves_canary_records_out_on_sqlite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "agentevals.db"
    sink = SQLiteSink(path)
    await sink.write(_records())
    await sink.close()
    _check(str(path), capsys)


async def test_the_report_leaves_canary_records_out_on_postgres(
    capsys: pytest.CaptureFixture[str], postgres: Any
) -> None:
    import psycopg

    table = f"agentevals_canary_{uuid.uuid4().hex[:10]}"
    try:
        sink = PostgresSink(postgres.url, table=table)
        await sink.write(_records())
        await sink.close()
        _check(postgres.url, capsys, table=table)
    finally:
        async with await psycopg.AsyncConnection.connect(postgres.url, autocommit=True) as conn:
            for suffix in ("", "_runs", "_meta", "_rollup", "_bins", "_labels", "_versions"):
                await conn.execute(f"DROP TABLE IF EXISTS {table}{suffix} CASCADE")


async def test_the_viewer_and_the_judges_raw_pass_rate_leave_canary_records_out(tmp_path: Path) -> None:
    path = tmp_path / "agentevals.db"
    sink = SQLiteSink(path)
    await sink.write(_records())
    await sink.close()
    client = TestClient(create_app(path, warm=False))
    overview = client.get("/").text
    assert "50.0%" in overview  # 2 of the 4 live scores pass; with the canary's, 4 of 6 would
    assert "66.7%" not in overview
    assert "2 canary records are left out" in overview
    assert "canary records" not in client.get("/?eval=eval-b").text  # an evaluation has none
    canary = client.get("/?source=canary").text
    assert "100.0%" in canary and "canary records are left out" not in canary
    assert '<option value="canary" selected>' in canary
    assert "100.0%" in client.get("/scorers/judge?source=canary").text
    runs = client.get("/runs?source=canary").text
    assert "run2" in runs and "run3" in runs and "run0" not in runs
    bad = client.get("/?source=bogus")
    assert bad.status_code == 400 and "expected one of live, eval, rescore, canary" in bad.text
    html = write_report(path, tmp_path / "report.html").read_text()
    assert "2 canary records are left out" in html
    with Reader(path) as reader, reader.session() as q:
        assert q.latest_evals() == []  # a canary epoch is no evaluation to compare
    with Labels(path) as labels:
        for run in range(4):
            labels.add(f"run{run}", "judge", run < 2, labeller="ann")
    found = agreement(path, "judge")
    raw = found.versions[0].raw
    assert (raw.scored, raw.passed) == (4, 2)
