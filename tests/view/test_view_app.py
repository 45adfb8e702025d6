"""The viewer's app through Starlette's TestClient (no browser): read-only routes, escaping, errors,
paging, PostgreSQL stores (the same numbers as SQLite), the CLI and the HTML report."""

from __future__ import annotations

import json
import math
import re
import threading
import time
import uuid
from collections import Counter
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from agentevals._view import _pages, _rolled
from agentevals._view._app import create_app
from agentevals._view._queries import PAGE_SIZE, Filters, Reader
from agentevals._view._render import json_script
from agentevals.cli import main
from tests.view.conftest import XSS, XSS_RUN, ViewCommand, generated_records, write_store


@pytest.fixture(scope="module")
def client(generated_store: Path) -> TestClient:
    return TestClient(create_app(generated_store))


def test_every_route_is_get_only(client: TestClient) -> None:
    for path in (
        "/",
        "/fragments/overview",
        "/scorers/tone",
        "/fragments/scorers/tone",
        "/runs",
        f"/runs/{XSS_RUN}",
        "/compare",
        "/agreement",
    ):
        assert client.get(path).status_code == 200
        assert client.post(path).status_code == 405
        assert client.delete(path).status_code == 405


def test_user_text_is_escaped_in_html_and_in_chart_data(client: TestClient) -> None:
    paths = (
        f"/runs/{XSS_RUN}",
        "/runs?scorer=exact_match&max=0",
        "/scorers/exact_match",
        "/fragments/scorers/exact_match",
        "/",
        "/fragments/overview",
    )
    for path in paths:
        body = client.get(path).text
        assert XSS not in body and "<script>alert" not in body, path
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in client.get(f"/runs/{XSS_RUN}").text
    embedded = json_script({"label": XSS})
    assert "<" not in embedded and json.loads(embedded) == {"label": XSS}
    page = client.get("/scorers/exact_match")
    assert page.headers["content-security-policy"].startswith("default-src 'self'")


def test_bad_parameters_and_unknown_runs(client: TestClient) -> None:
    response = client.get("/?since=yesterday")
    assert response.status_code == 400 and "7d or 24h" in response.text
    assert client.get("/runs?min=low").status_code == 400
    assert client.get("/runs?outcome=great").status_code == 400
    assert client.get("/scorers/tone?bucket=year").status_code == 400
    missing = client.get("/runs/no-such-run")
    assert missing.status_code == 404 and "no run" in missing.text


def test_runs_are_paged_worst_first(generated_store: Path) -> None:
    reader = Reader(generated_store)
    with reader.session() as q:
        first = _pages.runs(q, Filters(), 0, scorer="faithfulness", outcome="scored")
        second = _pages.runs(q, Filters(), 1, scorer="faithfulness", outcome="scored")
        failed = _pages.runs(q, Filters(), 0, outcome="failed")
    assert len(first["rows"]) == PAGE_SIZE and first["more"]
    scores = [r["score"] for r in first["rows"] + second["rows"]]
    assert scores == sorted(scores)
    assert {r["id"] for r in first["rows"]}.isdisjoint(r["id"] for r in second["rows"])
    assert {r["outcome"] for r in failed["rows"]} == {"failed"}
    assert first["rows"][0]["input"].startswith("How do I reset my password")


@pytest.mark.parametrize(
    ("since", "until", "entity"),
    [
        (None, None, None),
        (timedelta(days=-9, minutes=-17), None, None),  # a partial first hour read from the rows
        (timedelta(days=-20, minutes=-41), timedelta(days=-3, minutes=-5), "support_agent"),
        (timedelta(days=-2, minutes=-50), timedelta(days=-2, minutes=-20), None),  # within one hour
    ],
)
def test_overview_from_the_histogram_matches_the_rows(
    generated_store: Path, since: timedelta | None, until: timedelta | None, entity: str | None
) -> None:
    records = generated_records()
    newest = max(r.created_at for r in records)
    f = Filters(
        since=None if since is None else newest + since,
        until=None if until is None else newest + until,
        entity=entity,
    )
    chosen = [
        r
        for r in records
        if (f.since is None or r.created_at >= f.since)
        and (f.until is None or r.created_at < f.until)
        and (entity is None or r.entity == entity)
    ]
    settings = _pages.Settings({"faithfulness": 0.7}, default=0.35)
    with Reader(generated_store) as reader:
        data = _pages.overview(reader, f, settings)
        with reader.session() as q:  # read from the rollup and histogram, not the rows
            assert (
                _pages._from_histogram(_rolled.outcome_totals(q, f), _rolled.histogram(q, f), settings)
                is not None
            )
    by_id = {s["id"]: s for s in data["scorers"]}
    assert set(by_id) == {r.scorer_id for r in chosen}
    for scorer_id, shown in by_id.items():
        mine = [r for r in chosen if r.scorer_id == scorer_id]
        scores = sorted(r.score for r in mine if r.score is not None)
        threshold = 0.7 if scorer_id == "faithfulness" else 0.35
        assert shown["count"] == len(mine) and shown["scored"] == len(scores)
        assert shown["outcomes"] == dict(Counter(r.outcome for r in mine))
        if not scores:
            continue
        assert shown["mean"] == pytest.approx(sum(scores) / len(scores))
        judged = len(scores) + sum(r.outcome == "failed" for r in mine)  # a failure counts as not passed
        assert shown["pass_rate"] == pytest.approx(sum(s >= threshold for s in scores) / judged)
        for q, key in ((0.1, "p10"), (0.5, "p50")):
            exact = scores[max(1, math.ceil(q * len(scores))) - 1]
            assert exact - 0.01 - 1e-9 <= shown[key] <= exact  # its bin's lower edge (1.0: 0.99)


def test_overview_numbers_match_the_records(generated_store: Path) -> None:
    records = generated_records()
    reader = Reader(generated_store)
    data = _pages.overview(reader, Filters(), _pages.Settings({"faithfulness": 0.7}))
    by_id = {s["id"]: s for s in data["scorers"]}
    faith = [r for r in records if r.scorer_id == "faithfulness"]
    scores = sorted(r.score for r in faith if r.score is not None)
    assert by_id["faithfulness"]["count"] == len(faith)
    assert by_id["faithfulness"]["mean"] == pytest.approx(sum(scores) / len(scores))
    p50 = scores[(len(scores) + 1) // 2 - 1]
    assert by_id["faithfulness"]["p50"] == pytest.approx(p50, abs=0.01)  # the histogram's bin
    judged = len(scores) + sum(r.outcome == "failed" for r in faith)  # a failure counts as not passed
    assert by_id["faithfulness"]["pass_rate"] == pytest.approx(sum(s >= 0.7 for s in scores) / judged)
    assert by_id["faithfulness"]["errors"] == [("JudgeTimeout", sum(r.outcome == "failed" for r in faith))]
    assert by_id["tone"]["skip_reasons"] == {"no_output": sum(r.outcome == "skipped" for r in records)}
    assert by_id["tone"]["coverage"]["store_runs"] == len({r.run_id for r in records})
    assert {r["score"] for r in data["worst"]} == {0.0}
    assert XSS_RUN in [r["run_id"] for r in data["worst"]]


def test_the_overview_page_loads_coverage_and_worst_scores_after_it_shows(
    client: TestClient, generated_store: Path
) -> None:
    page = client.get("/?since=3650d").text
    assert 'data-fragment="/fragments/overview?since=3650d"' in page
    assert "sampled /" not in page and 'id="worst"' not in page  # both still loading
    fragment = client.get("/fragments/overview?since=3650d")
    assert fragment.status_code == 200 and fragment.headers["content-type"].startswith("text/html")
    full = _pages.overview(Reader(generated_store), Filters(), _pages.Settings())
    assert full["worst"] and not full["deferred"]
    cells = dict(re.findall(r'<span data-coverage="([^"]+)">([^<]+)', fragment.text))
    for s in full["scorers"]:
        c = s["coverage"]
        assert cells[s["id"]].startswith(f"{c['runs']} sampled / {c['store_runs']} seen"), s["id"]
    assert 'id="worst"' in fragment.text and full["worst"][0]["run_id"] in fragment.text
    assert client.get("/fragments/overview?since=soon").status_code == 400


def test_compare_flags_the_regression(generated_store: Path) -> None:
    reader = Reader(generated_store)
    data = _pages.compare(reader, Filters(eval_id="eval-a"), Filters(eval_id="eval-b"))
    deltas = {d["scorer_id"]: d["delta"] for d in data["deltas"]}
    assert deltas["faithfulness"].delta < 0 and deltas["faithfulness"].hint == "significant"
    assert deltas["tone"].hint == "within noise"
    assert data["regressed"] and all(r["delta"] < 0 for r in data["regressed"])
    assert [r["delta"] for r in data["regressed"]] == sorted(r["delta"] for r in data["regressed"])


def test_no_store_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="no agentevals store"):
        create_app(tmp_path / "missing.db")
    assert main(["view", "--db", str(tmp_path / "missing.db")]) == 2
    assert "no agentevals store" in capsys.readouterr().err
    assert main(["view", "--db", str(tmp_path / "x.db"), "--pass-threshold", "tone=high"]) == 2
    assert main(["view", "--help"]) == 0
    assert "127.0.0.1" in capsys.readouterr().out


def test_report_html_is_self_contained(generated_store: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert main(["report", "--db", str(generated_store), "--html", str(out), "--worst", "0"]) == 0
    page = out.read_text()
    assert not re.search(r"""(src|href)=["'](?!#|data:)""", page)  # no file or URL to fetch
    assert "uPlot" in page and 'id="chart-data"' in page and XSS not in page
    data = json.loads(re.search(r'id="chart-data">(.*?)</script>', page, re.S).group(1))  # type: ignore[union-attr]
    assert {"spark-tone", "s0-trend", "compare"} <= data.keys()
    assert "Compare: A = eval eval-a, B = eval eval-b" in page


def test_postgres_shows_what_sqlite_shows(postgres: Any, tmp_path: Path) -> None:
    import psycopg

    from agentevals._support._sync import run_sync
    from agentevals.sinks import PostgresSink

    records = generated_records(runs=300)
    sqlite_path = write_store(tmp_path / "same.db", records)
    table = f"agentevals_view_{uuid.uuid4().hex[:10]}"

    async def write() -> None:
        sink = PostgresSink(postgres.url, table=table)
        try:
            await sink.write(records)
        finally:
            await sink.close()

    partly = Filters(since=min(r.created_at for r in records) + timedelta(days=3, minutes=17))
    try:
        run_sync(write())
        pages = []
        for address, name in ((sqlite_path, "agentevals_scores"), (postgres.url, table)):
            reader = Reader(address, table=name)
            with reader.session() as q:
                settings = _pages.Settings()
                f = Filters(entity="support_agent")
                overview = _pages.overview(reader, f, settings)
                pages.append(
                    {
                        "overview": [
                            {k: s[k] for k in ("id", "count", "mean", "p10", "p50", "pass_rate", "errors")}
                            for s in overview["scorers"]
                        ],
                        "scorer": _pages.scorer(reader, "faithfulness", Filters(), "week", settings)[
                            "charts"
                        ],
                        "scorer, hourly, from a partial hour": {
                            k: v
                            for k, v in _pages.scorer(reader, "tone", partly, "hour", settings).items()
                            if k in ("charts", "summary", "outcomes", "breakdowns")
                        },
                        "overview of an evaluation": [
                            {
                                k: s[k]
                                for k in ("id", "count", "mean", "p50", "pass_rate", "cost_usd", "tokens")
                            }
                            for s in _pages.overview(reader, Filters(eval_id="eval-b"), settings)["scorers"]
                        ],
                        "runs": [
                            r["id"] for r in _pages.runs(q, Filters(), 0, scorer="faithfulness")["rows"]
                        ],
                        "run": _pages.run(q, "run-00003")["messages"],  # type: ignore[index]
                        "compare": [
                            asdict(d["delta"])
                            for d in _pages.compare(
                                reader, Filters(eval_id="eval-a"), Filters(eval_id="eval-b")
                            )["deltas"]
                        ],
                    }
                )
            client = TestClient(create_app(address, table=name))
            for path in (
                "/",
                "/scorers/faithfulness?bucket=hour",
                "/fragments/scorers/faithfulness?since=30d",
                "/runs?outcome=failed",
                "/compare?a_since=60d",
            ):
                assert client.get(path).status_code == 200, path
        assert _same(pages[0], pages[1])
    finally:
        with psycopg.connect(postgres.url, autocommit=True) as conn:
            for name in (table, f"{table}_runs", f"{table}_meta", f"{table}_rollup"):
                conn.execute(f"DROP TABLE IF EXISTS {name}")


def _same(a: Any, b: Any) -> bool:
    """Equal, floats to 9 digits (the two databases sum in different orders)."""
    if isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-9)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for key in a:
            _same(a[key], b[key])
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    else:
        assert a == b
    return True


def test_a_changed_store_is_served_stale_then_refreshed(tmp_path: Path) -> None:
    """A page of a store that changed comes at once from the last computation while one refresh runs
    in the background; the next visit after it sees the new rows."""
    records = generated_records(runs=60)
    path = write_store(tmp_path / "live.db", records[:90])
    client = TestClient(create_app(path, warm=False))
    before = client.get("/").text
    write_store(path, records[90:])
    stale = client.get("/").text
    assert stale == before
    deadline = time.monotonic() + 30
    while client.get("/").text == before:
        assert time.monotonic() < deadline, "the overview was not refreshed"
        time.sleep(0.05)
    counts = re.findall(r'id="total-rows">(\d+)<', client.get("/").text)
    assert counts == [str(len(records))]


def test_eval_html_reports_the_batch_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(
        "\n".join(
            json.dumps({"input": f"{n} + 1", "ground_truth": str(n + 1 if n % 4 else 0)}) for n in range(8)
        )
    )
    target = tmp_path / "adder.py"
    target.write_text("def add(question: str) -> str:\n    return str(eval(question))\n")
    out = tmp_path / "eval.html"
    code = main(
        ["eval", str(data), "--target", f"{target}:add", "--scorer", "exact_match", "--threshold",
         "exact_match=0.9", "--html", str(out), "--no-progress"]
    )  # fmt: skip
    assert code == 1  # two of eight items are wrong: below the threshold
    page = out.read_text()
    assert 'data-scorer="exact_match"' in page and "≥ 0.9" in page
    assert re.search(r'id="total-rows">8<', page)
    assert "HTML report written to" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.db"))  # the records went to a temporary store, now gone


def test_the_view_command_serves_on_loopback(generated_store: Path) -> None:
    import httpx

    with ViewCommand("--db", str(generated_store)) as view:
        response = httpx.get(f"{view.url}/runs?outcome=failed", timeout=5)
        assert response.status_code == 200 and "JudgeTimeout" in response.text
        assert httpx.post(f"{view.url}/runs", timeout=5).status_code == 405
        assert httpx.post(f"{view.url}/labels", timeout=5).status_code == 404  # no labels mode
    assert f"on http://127.0.0.1:{view.port}/ (Ctrl-C" in view.output


def test_a_jsonl_store_is_viewed(tmp_path: Path) -> None:
    from agentevals._support._sync import run_sync
    from agentevals.sinks import JsonlSink

    path = tmp_path / "scores.jsonl"

    async def write() -> None:
        sink = JsonlSink(path)
        try:
            await sink.write(generated_records(runs=30))
        finally:
            await sink.close()

    run_sync(write())
    before = path.read_bytes()
    with TestClient(create_app(path)) as client:  # the context runs the app's shutdown
        assert re.findall(r'id="total-rows">(\d+)<', client.get("/").text) == [str(30 * 3 + 1)]
        assert client.get("/scorers/faithfulness").status_code == 200
        assert "How do I reset my password" in client.get("/runs/run-00001").text
    assert path.read_bytes() == before
    assert main(["report", "--db", str(path), "--html", str(tmp_path / "r.html")]) == 0


def test_closing_the_reader_waits_for_a_read_on_its_store(generated_store: Path) -> None:
    """The app's start-up warm-up may still read when the server stops: closing the SQLite connection
    under that read crashed the process (a segfault in CI)."""
    reader = Reader(generated_store)
    reading, release = threading.Event(), threading.Event()
    results: list[str] = []

    def slow_read(store: Any) -> str:
        reading.set()
        release.wait(10)
        return str(store.kind)

    read = threading.Thread(target=lambda: results.append(reader.with_store(slow_read)))
    read.start()
    assert reading.wait(10)
    closing = threading.Thread(target=reader.close)
    closing.start()
    closing.join(0.3)
    assert closing.is_alive()  # waits for the read to end
    release.set()
    read.join(10)
    closing.join(10)
    assert not closing.is_alive() and results == ["sqlite"]
