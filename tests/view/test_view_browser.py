"""``agentevals view`` in a real browser (Debian's Chromium through Playwright): every page loads
without console errors, charts hold their data points, filters change what is shown, a worst run opens
its transcript, user text is escaped, a run labelled in labels mode is counted; screenshots go to
tests/view/output/ for review."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.view.conftest import (
    HOUR,
    OUTPUT,
    REPLY,
    XSS,
    XSS_RUN,
    Server,
    ViewCommand,
    labelled_records,
    write_store,
)

PAGES = [
    ("overview", "/"),
    ("scorer", "/scorers/faithfulness"),
    ("runs", "/runs"),
    ("compare", "/compare?a_eval=eval-a&b_eval=eval-b"),
    ("agreement", "/agreement"),
]


class Watched:
    """A page with its console errors, uncaught exceptions and dialogs recorded."""

    def __init__(self, page: Any) -> None:
        self.page, self.errors, self.dialogs = page, [], []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

    def open(self, url: str) -> Any:
        response = self.page.goto(url)
        assert response is not None and response.status == 200, url
        self.page.wait_for_load_state("networkidle")
        assert self.errors == [], f"{url}: {self.errors}"
        return self.page


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        yield Watched(context.new_page())
    finally:
        context.close()


def chart_data(page: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(page.locator("#chart-data").text_content())
    return data


def drawn(page: Any, key: str) -> int:
    chart = page.locator(f'[data-chart="{key}"]')
    assert chart.locator("canvas").count() == 1, f"chart {key} has no canvas"
    return int(chart.get_attribute("data-points"))


def scale(page: Any, key: str, name: str = "x") -> tuple[float, float]:
    """The span of chart ``key``'s scale ``name`` as uPlot drew it (its axis' first and last value)."""
    low, high = page.locator(f'[data-chart="{key}"]').get_attribute(f"data-scale-{name}").split()
    return float(low), float(high)


def test_every_page_of_the_demo_store_loads_and_is_screenshotted(
    demo_server: Server, watched: Watched
) -> None:
    page = watched.open(demo_server.url + "/")
    scorers = page.locator("#scorer-table tbody tr").evaluate_all("rows => rows.map(r => r.dataset.scorer)")
    assert {"used_tool", "answer_relevancy"} <= set(scorers)
    data = chart_data(page)
    for scorer_id in scorers:
        assert drawn(page, f"spark-{scorer_id}") == len(
            [y for y in data[f"spark-{scorer_id}"]["y"] if y is not None]
        )
    page.screenshot(path=OUTPUT / "demo-overview.png", full_page=True)
    page = watched.open(demo_server.url + "/scorers/answer_relevancy")
    data = chart_data(page)
    assert drawn(page, "trend") == len(data["trend"]["x"]) > 0
    assert drawn(page, "histogram") == len(data["histogram"]["y"]) > 0
    assert sum(data["histogram"]["y"]) == int(page.locator(".cards .ok").first.text_content())
    page.screenshot(path=OUTPUT / "demo-scorer.png", full_page=True)
    page = watched.open(demo_server.url + "/runs")
    assert page.locator("#runs tbody tr").count() > 0
    page.screenshot(path=OUTPUT / "demo-runs.png", full_page=True)
    page.locator("#runs a.run-link").first.click()
    page.wait_for_load_state("networkidle")
    assert "/runs/" in page.url
    assert page.locator("#transcript .msg.role-user").count() >= 1
    assert page.locator("#transcript .msg.role-assistant").count() >= 1
    assert page.locator(".record").count() >= 1
    page = watched.open(demo_server.url + "/runs?scorer=used_tool&min=1")
    page.locator("#runs a.run-link").first.click()
    page.wait_for_load_state("networkidle")
    assert page.locator("#transcript .tool").count() >= 1  # the demo's agent called a tool
    assert page.locator("#transcript .msg.role-system").count() == 1
    assert watched.errors == []
    page.screenshot(path=OUTPUT / "demo-run.png", full_page=True)
    page = watched.open(demo_server.url + "/compare?a_since=30d&b_since=1h")
    assert page.locator("#deltas tbody tr").count() >= 1
    page.screenshot(path=OUTPUT / "demo-compare.png", full_page=True)


@pytest.mark.parametrize(("name", "path"), PAGES)
def test_pages_of_a_generated_store_draw_their_charts(
    generated_server: Server, watched: Watched, name: str, path: str
) -> None:
    page = watched.open(generated_server.url + path)
    data = chart_data(page)
    charts = page.locator("[data-chart]")
    for index in range(charts.count()):
        key = charts.nth(index).get_attribute("data-chart")
        points = drawn(page, key)
        assert points > 0, key
        if "x" in data[key] and "y" in data[key]:
            assert points == len([y for y in data[key]["y"] if y is not None]), key
    page.screenshot(path=OUTPUT / f"generated-{name}.png", full_page=True)


def test_scorer_page_shows_breakdowns_failures_and_cost(generated_server: Server, watched: Watched) -> None:
    page = watched.open(generated_server.url + "/scorers/faithfulness?bucket=week")
    page.wait_for_selector("[data-fragment]:not([aria-busy])", state="attached")  # the breakdowns came
    assert page.locator(".loading").count() == 0
    data = chart_data(page)
    assert 4 <= len(data["trend"]["x"]) <= 6  # 30 days in weeks
    assert drawn(page, "cost") == len(data["cost"]["x"])
    assert any(c > 0 for c in data["cost"]["cost"])
    assert page.locator("#failures").inner_text().startswith("JudgeTimeout")
    versions = page.locator('[data-breakdown="scorer version"] tbody tr').all_inner_texts()
    assert [v.split("\t")[0] for v in versions] == ["2", "1"] or [v.split("\t")[0] for v in versions] == [
        "1",
        "2",
    ]
    assert "gpt-4o-mini" in page.locator('[data-breakdown="agent model"]').inner_text()


def test_filters_change_what_is_shown(generated_server: Server, watched: Watched) -> None:
    page = watched.open(generated_server.url + "/")
    everyone = int(page.locator("#total-rows").inner_text())
    page.select_option('#filters select[name="entity"]', "billing_agent")
    page.click("#filters button")
    page.wait_for_load_state("networkidle")
    assert "entity=billing_agent" in page.url
    assert 0 < int(page.locator("#total-rows").inner_text()) < everyone
    page = watched.open(generated_server.url + "/runs")
    page.select_option('#filters select[name="outcome"]', "failed")
    page.click("#filters button")
    page.wait_for_load_state("networkidle")
    outcomes = page.locator("#runs tbody tr").evaluate_all("rows => rows.map(r => r.dataset.outcome)")
    assert outcomes and set(outcomes) == {"failed"}
    page.fill('#filters input[name="min"]', "0.9")
    page.select_option('#filters select[name="outcome"]', "")
    page.select_option('#filters select[name="scorer"]', "faithfulness")
    page.click("#filters button")
    page.wait_for_load_state("networkidle")
    scores = [float(s) for s in page.locator("#runs tbody td:first-child").all_inner_texts()]
    assert scores and min(scores) >= 0.9 and scores == sorted(scores)  # worst first
    page.click("#next")
    page.wait_for_load_state("networkidle")
    assert "page=1" in page.url and page.locator("#runs tbody tr").count() > 0
    assert watched.errors == []


def test_the_overview_loads_coverage_and_worst_scores_after_it_shows(
    generated_server: Server, watched: Watched, generated_store: Any
) -> None:
    from agentevals._view import _pages
    from agentevals._view._queries import Filters, Reader

    page = watched.open(generated_server.url + "/")
    page.wait_for_selector("#worst-slot:not([aria-busy])")
    assert page.locator(".loading").count() == 0 and watched.errors == []
    expected = _pages.overview_deferred(Reader(generated_store), Filters())["coverage"]
    cells = page.locator("[data-coverage]")
    assert cells.count() == len(expected)
    for index in range(cells.count()):
        cell = cells.nth(index)
        c = expected[cell.get_attribute("data-coverage")]
        assert cell.inner_text().startswith(f"{c['runs']} sampled / {c['store_runs']} seen")
    assert page.locator("#worst-slot #worst tbody tr").count() == 10


def test_the_overview_shows_dropped_runs_and_stored_thresholds(
    catalog_server: Server, watched: Watched
) -> None:
    page = watched.open(catalog_server.url + "/")
    page.wait_for_selector("#worst-slot:not([aria-busy])")
    assert page.locator(".loading").count() == 0 and watched.errors == []
    dropped = {
        cell.get_attribute("data-dropped"): cell.inner_text().strip()
        for cell in page.locator("#scorer-table [data-dropped]").all()
    }
    assert dropped == {"exact_match": "0", "faithfulness": "7", "tone": "2"}  # conftest.DROPS
    tone = page.locator('#scorer-table tr[data-scorer="tone"] .threshold')
    assert "≤ 0.8" in tone.inner_text() and tone.locator('[data-origin="stored"]').count() == 1
    page.screenshot(path=OUTPUT / "catalog-overview.png", full_page=True)
    page = watched.open(catalog_server.url + "/?entity=support_agent")
    page.wait_for_selector("#worst-slot:not([aria-busy])")
    cell = page.locator('#scorer-table [data-dropped="faithfulness"]')
    assert cell.inner_text().strip() == "4"
    page = watched.open(catalog_server.url + "/?eval=eval-b")
    page.wait_for_selector("#worst-slot:not([aria-busy])")
    assert set(page.locator("#scorer-table [data-dropped]").all_inner_texts()) == {"—"}
    assert "≥ 0.9" in page.locator('#scorer-table tr[data-scorer="faithfulness"] .threshold').inner_text()


def test_the_run_page_shows_the_judges_replies(catalog_server: Server, watched: Watched) -> None:
    page = watched.open(catalog_server.url + "/runs/run-replied")
    page.locator("details.step").first.click()
    reply = page.locator("details.step pre.reply").first
    assert reply.is_visible() and reply.inner_text() == REPLY  # the script tag as text
    assert page.locator("details.step pre.reply").count() == 2
    assert watched.dialogs == [] and watched.errors == []
    page.screenshot(path=OUTPUT / "catalog-run.png", full_page=True)


def test_clicking_a_worst_run_opens_its_transcript(generated_server: Server, watched: Watched) -> None:
    page = watched.open(generated_server.url + "/")
    page.locator("#worst a.run-link").first.click()
    page.wait_for_load_state("networkidle")
    assert "/runs/" in page.url
    assert page.locator("#transcript .msg").count() >= 1
    assert page.locator(".record").count() >= 1
    assert watched.errors == []


def test_user_text_is_escaped(generated_server: Server, watched: Watched) -> None:
    page = watched.open(generated_server.url + f"/runs/{XSS_RUN}")
    assert page.locator("#transcript .msg.role-user pre.content").inner_text() == XSS
    assert page.locator(".record .reason").inner_text() == XSS
    assert page.locator("script:not([src]):not([type])").count() == 0
    page = watched.open(generated_server.url + "/runs?scorer=exact_match&max=0")
    assert XSS in page.locator("#runs").inner_text()
    page = watched.open(generated_server.url + "/scorers/exact_match")
    assert XSS in page.locator('[data-breakdown="agent model"]').inner_text()
    assert watched.dialogs == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_narrow_window_and_colour_schemes(browser: Any, generated_server: Server, scheme: str) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 800}, color_scheme=scheme)
    try:
        watched = Watched(context.new_page())
        for name, path in PAGES:
            page = watched.open(generated_server.url + path)
            # Nothing but the scrolling tables is wider than the window.
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 1, f"{path} is {overflow}px wider than a 390px window"
            for table in page.locator("main table").all():  # a table fits without scrolling sideways
                assert table.evaluate("t => t.parentElement.scrollWidth - t.parentElement.clientWidth") <= 1
            page.screenshot(path=OUTPUT / f"narrow-{scheme}-{name}.png", full_page=True)
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert (background == "rgb(20, 23, 28)") == (scheme == "dark")
    finally:
        context.close()


def test_the_html_report_works_offline(browser: Any, generated_store: Any, tmp_path: Any) -> None:
    from agentevals._view._report_html import write_report

    path = write_report(generated_store, tmp_path / "report.html")
    context = browser.new_context(viewport={"width": 1280, "height": 800}, offline=True)
    try:
        watched = Watched(context.new_page())
        requests: list[str] = []
        watched.page.on("request", lambda r: requests.append(r.url))
        page = watched.open(path.as_uri())
        assert requests == [path.as_uri()]  # data, styles and chart code are all in the file
        data = chart_data(page)
        for key in ("spark-faithfulness", "s0-trend", "s1-histogram", "compare"):
            assert drawn(page, key) > 0, key
        assert page.locator("#regressed tbody tr").count() > 0  # eval-b scores the items lower
        assert XSS in page.locator("#worst").inner_text() and watched.dialogs == []
        assert "sampled /" in page.locator("[data-coverage]").first.inner_text()  # inline, not fetched
        assert len(data) >= 10
        page.screenshot(path=OUTPUT / "report.png", full_page=True)
    finally:
        context.close()


HOUR_START = int(HOUR.timestamp())
DAY_START = int(HOUR.replace(hour=0).timestamp())


def test_one_hour_of_data_is_drawn_around_its_hour(hour_server: Server, watched: Watched) -> None:
    """Time axes span the bucket either side of the lone one (not years), counts start at 0, a code
    scorer has no judge-cost chart."""
    page = watched.open(hour_server.url + "/scorers/faithfulness?bucket=hour")
    assert drawn(page, "trend") == drawn(page, "cost") == 1
    assert scale(page, "trend") == scale(page, "cost") == (HOUR_START - 3600, HOUR_START + 3600)
    assert scale(page, "cost", "y")[0] == scale(page, "cost", "tokens")[0] == 0
    assert scale(page, "histogram") == (0, 1) and scale(page, "histogram", "y") == (0, 2.2)  # 1 or 2 a bar
    page.screenshot(path=OUTPUT / "hour-scorer.png", full_page=True)
    page = watched.open(hour_server.url + "/scorers/faithfulness")
    assert scale(page, "trend") == (DAY_START - 86400, DAY_START + 86400)
    page = watched.open(hour_server.url + "/scorers/tool_calls")  # every score 2: one bar
    assert scale(page, "histogram") == (1, 4) and scale(page, "histogram", "y") == (0, 33)
    assert page.locator('[data-chart="cost"]').count() == 0
    assert page.locator('[data-empty="cost"]').inner_text().startswith("No judge cost")
    page = watched.open(hour_server.url + "/")
    for scorer_id in ("exact_match", "faithfulness", "tool_calls"):
        assert scale(page, f"spark-{scorer_id}") == (DAY_START - 86400, DAY_START + 86400)
    page.screenshot(path=OUTPUT / "hour-overview.png", full_page=True)


def test_the_html_report_of_one_hour_of_data(browser: Any, hour_store: Any, tmp_path: Any) -> None:
    from agentevals._view._report_html import write_report

    path = write_report(hour_store, tmp_path / "report.html")
    context = browser.new_context(viewport={"width": 1280, "height": 800}, offline=True)
    try:
        page = Watched(context.new_page()).open(path.as_uri())
        sections = page.locator(".scorer-section").evaluate_all("all => all.map(s => s.id)")
        assert sections == [
            f"scorer-{s}" for s in ("context_recall", "exact_match", "faithfulness", "tool_calls")
        ]
        for prefix in ("s1-", "s2-", "s3-"):  # the report's buckets are days
            assert scale(page, prefix + "trend") == (DAY_START - 86400, DAY_START + 86400), prefix
            assert scale(page, prefix + "histogram", "y")[0] == 0, prefix
        assert scale(page, "s2-cost") == (DAY_START - 86400, DAY_START + 86400)
        assert page.locator('[data-chart="s0-trend"], [data-chart$="-cost"]').count() == 1  # s2's
        assert page.locator('[data-empty="s0-trend"], [data-empty="s0-histogram"]').count() == 2
        assert page.locator('[data-empty="s1-cost"], [data-empty="s3-cost"]').count() == 2
        page.screenshot(path=OUTPUT / "hour-report.png", full_page=True)
    finally:
        context.close()


def test_a_run_labelled_in_the_browser_is_counted_on_the_agreement_page(
    watched: Watched, tmp_path: Any
) -> None:
    """``agentevals view --labels``: a click on "pass" stores the label, the run page lists it, the
    Agreement page counts it; a click on "delete" removes it."""
    store = write_store(tmp_path / "labelled.db", labelled_records())
    with ViewCommand("--db", str(store), "--labels", "--labeller", "ann") as view:
        page = watched.open(f"{view.url}/runs/h5")
        assert page.locator("#labels-table tbody").inner_text() == "No labels of this run yet."
        page.locator('form[data-scorer="helpfulness"] input[name="note"]').fill("answers the question")
        page.locator('form[data-scorer="helpfulness"] button.pass').click()
        page.wait_for_url(f"{view.url}/runs/h5#labels")
        row = page.locator('#labels-table tr[data-name="helpfulness"]')
        assert row.locator("td").nth(1).inner_text() == "pass"
        assert row.locator("td").nth(2).inner_text() == "ann"
        assert "answers the question" in row.inner_text()
        page.screenshot(path=OUTPUT / "labels-run.png", full_page=True)
        page = watched.open(f"{view.url}/agreement")
        found = page.locator("#agreement-helpfulness")
        assert found.locator(".label-count").inner_text() == "1 label"
        v2 = found.locator('[data-version="v2"]')
        assert v2.locator(".labelled").inner_text() == "1"
        assert v2.locator('[data-cell="fn"]').inner_text() == "1"  # the judge failed h5 (0.1)
        assert v2.locator(".disagreements a.run-link").get_attribute("href") == "/runs/h5"
        page.screenshot(path=OUTPUT / "labels-agreement.png", full_page=True)
        page = watched.open(f"{view.url}/runs/h5")
        page.locator("#labels-table button.delete").click()
        page.wait_for_url(f"{view.url}/runs/h5#labels")
        assert page.locator("#labels-table tbody").inner_text() == "No labels of this run yet."
        page = watched.open(f"{view.url}/agreement")
        assert page.locator("#no-labels").count() == 1
        assert watched.errors == [] and watched.dialogs == []
    assert ", labels mode" in view.output
