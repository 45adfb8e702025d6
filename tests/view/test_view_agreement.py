"""What the viewer and the HTML report show from people's labels and scorer versions: the Agreement
page (per scorer and version: the numbers ``agreement`` computes, the confusion matrix, the corrected
rate or why there is none, disagreements worst first), corrected pass rates beside the pass rates, the
marks where a scorer's version changed, and compare's note on versions. SQLite and PostgreSQL."""

from __future__ import annotations

import html
import json
import re
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from agentevals._trust._stats import Confusion, corrected_pass_rate
from agentevals._view import _pages, _versions
from agentevals._view._app import create_app
from agentevals._view._queries import Filters, Reader
from agentevals._view._render import rate
from agentevals._view._report_html import write_report
from agentevals.evals import agreement
from tests.view.conftest import V2_START, add_labels

CONFUSION = Confusion(tp=35, fn=1, fp=3, tn=36)  # conftest.add_labels against the judge at 0.5


def client_of(address: str, table: str, **options: Any) -> TestClient:
    return TestClient(create_app(address, table=table, warm=False, **options))


def chart_data(page: str) -> dict[str, Any]:
    found = re.search(r'id="chart-data">(.*?)</script>', page, re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def section(page: str, scorer_id: str, version: str) -> str:
    """The text of one version's part of the Agreement page."""
    start = page.index(f'id="agreement-{scorer_id}"')
    start = page.index(f'data-version="{version}"', start)
    end = page.find('<div class="version-agreement"', start + 1)
    return page[start : end if end > 0 else len(page)]


def test_the_agreement_page_shows_each_scorer_version(labelled_store: tuple[str, str]) -> None:
    address, table = labelled_store
    add_labels(address, table)
    page = client_of(address, table).get("/agreement").text
    expected = agreement(address, "helpfulness", table=table)
    v2, v1 = expected.versions
    assert (v2.version, v1.version) == ("v2", "v1") and v2.confusion == CONFUSION
    shown = section(page, "helpfulness", "v2")
    cells = dict(re.findall(r'data-cell="(\w+)">(\d+)<', shown))
    assert cells == {"tp": "35", "fn": "1", "fp": "3", "tn": "36"}
    stats = dict(re.findall(r'data-stat="(\w+)">([^<]+)<', shown))
    assert stats == {
        "accuracy": str(v2.accuracy),
        "tpr": str(v2.tpr),
        "tnr": str(v2.tnr),
        "kappa": str(v2.kappa),
        "mae": str(v2.numeric.mae),  # type: ignore[union-attr]
        "pearson": str(v2.numeric.pearson),  # type: ignore[union-attr]
        "spearman": str(v2.numeric.spearman),  # type: ignore[union-attr]
    }
    corrected = corrected_pass_rate(40, 80, CONFUSION).estimate
    assert corrected is not None and v2.corrected is not None and v2.corrected.estimate == corrected
    assert f'data-rate="corrected">{rate(corrected)}<' in shown
    assert f'data-rate="raw">{rate(v2.raw.rate)}' in shown and "40/80 scored" in shown
    assert f'data-rate="people">{rate(v2.labels_pass_rate)}' in shown
    runs = re.findall(r'class="run-link" href="/runs/([^"]+)"', shown)
    assert runs == ["h0", "h1", "h2", "h74"]  # worst first: the judge 0.9 or 0.1 off, then 0.5
    assert "4 of 4" in shown
    old = section(page, "helpfulness", "v1")
    assert html.escape(v1.corrected_text) in old and "too few labels (0 passing, 0 failing" in old
    assert 'class="disagreements"' not in old
    assert 'id="agreement-tone"' not in page  # no labels of tone
    assert "Labels named helpful name no scorer of this store." in page


def test_the_agreement_page_counts_the_filtered_records_and_every_label(
    labelled_store: tuple[str, str],
) -> None:
    address, table = labelled_store
    add_labels(address, table)
    client = client_of(address, table)
    shown = section(client.get("/agreement?entity=billing_agent").text, "helpfulness", "v2")
    assert "20/40 scored" in shown  # the records of one agent
    assert dict(re.findall(r'data-cell="(\w+)">(\d+)<', shown)) == {
        "tp": "35",
        "fn": "1",
        "fp": "3",
        "tn": "36",
    }
    corrected = corrected_pass_rate(20, 40, CONFUSION).estimate
    assert f'data-rate="corrected">{rate(corrected)}<' in shown
    strict = client_of(address, table, min_labels=40).get("/agreement").text
    assert "too few labels (36 passing, 39 failing; 40 of each needed)" in section(
        strict, "helpfulness", "v2"
    )


def test_the_agreement_page_says_how_to_add_labels(labelled_store: tuple[str, str]) -> None:
    address, table = labelled_store
    client = client_of(address, table)
    page = client.get("/agreement").text
    assert 'id="no-labels"' in page and "No labels yet." in page
    for command in ("agentevals view --labels", "agentevals label", "agentevals labels import"):
        assert command in page
    assert '<a href="/agreement" aria-current="page">Agreement</a>' in page
    assert 'href="/agreement"' in client.get("/").text  # in the nav of every page
    assert client.get("/agreement?since=soon").status_code == 400


def test_the_overview_shows_a_corrected_rate_only_with_enough_labels(labelled_store: tuple[str, str]) -> None:
    address, table = labelled_store
    plain = client_of(address, table).get("/").text
    assert "data-corrected" not in plain
    add_labels(address, table)
    page = client_of(address, table).get("/").text
    corrected = corrected_pass_rate(40, 80, CONFUSION).estimate
    cells = dict(re.findall(r'data-corrected="(\w+)"[^>]*>corrected ([^<]+)<', page))
    assert cells == {"helpfulness": f"{rate(corrected)} · v2"}
    assert "judge 50.0% · people 48.0%" in page  # v2's raw rate of scored records; 36 of 75 labels passed
    raw = re.search(r'<tr data-scorer="helpfulness">.*?<td class="n" title="[^"]*">([^<]+)<', page, re.S)
    assert raw is not None and raw.group(1) == "60.0%"  # the pass rate itself, every version: 60 of 100
    too_few = client_of(address, table, min_labels=40).get("/").text
    assert "data-corrected" not in too_few


def test_the_scorer_page_shows_the_corrected_rate_or_why_not(labelled_store: tuple[str, str]) -> None:
    address, table = labelled_store
    add_labels(address, table)
    client = client_of(address, table)
    card = _card(client.get("/scorers/helpfulness").text)
    corrected = corrected_pass_rate(40, 80, CONFUSION).estimate
    assert corrected is not None
    assert "(version v2)" in card and f'<div class="big">{corrected.value * 100:.1f}%</div>' in card
    assert "judge 50.0% of 80 scored · people 48.0% of 75 labelled" in card
    assert "no labels" in _card(client.get("/scorers/tone").text)
    refused = _card(client_of(address, table, min_labels=40).get("/scorers/helpfulness").text)
    assert "too few labels (36 passing, 39 failing; 40 of each needed)" in refused
    old = _card(client.get("/scorers/helpfulness?until=2026-03-15").text)  # v1's records only
    assert "(version v1)" in old and "too few labels (0 passing, 0 failing" in old


def _card(page: str) -> str:
    found = re.search(r'<div class="card corrected-card" id="corrected">(.*?)</section>', page, re.S)
    assert found is not None, "no corrected pass rate card"
    return found.group(1)


def test_time_charts_mark_where_a_scorers_version_changed(labelled_store: tuple[str, str]) -> None:
    address, table = labelled_store
    client = client_of(address, table)
    changed = int(V2_START.timestamp())
    day, hour = changed - changed % 86400, changed - changed % 3600
    page = client.get("/scorers/helpfulness").text
    (mark,) = chart_data(page)["trend"]["marks"]
    assert mark == {"x": day, "label": "v2", "version": "v2", "at": V2_START.strftime("%Y-%m-%d %H:%M UTC")}
    assert f'<span class="version" title="v2">v2</span> first scored {mark["at"]}' in page
    hourly = chart_data(client.get("/scorers/helpfulness?bucket=hour").text)
    assert [m["x"] for m in hourly["trend"]["marks"]] == [hour]
    weekly = chart_data(client.get("/scorers/helpfulness?bucket=week").text)
    (week,) = weekly["trend"]["marks"]
    monday = datetime.fromtimestamp(week["x"], UTC)
    assert (monday.weekday(), monday.time()) == (0, time(0)) and 0 <= changed - week["x"] < 7 * 86400
    assert chart_data(client.get("/scorers/tone").text)["trend"]["marks"] == []
    assert chart_data(client.get("/scorers/helpfulness?since=2026-03-25").text)["trend"]["marks"] == []
    overview = chart_data(client.get("/").text)
    assert [m["x"] for m in overview["spark-helpfulness"]["marks"]] == [day]
    assert "marks" not in overview["spark-tone"]


def test_version_changes_are_read_from_the_store(labelled_store: tuple[str, str]) -> None:
    address, table = labelled_store
    with Reader(address, table=table) as reader, reader.session() as q:
        found = _versions.changes(q.version_starts())
    assert list(found) == ["helpfulness"]
    (change,) = found["helpfulness"]
    assert (change.version, change.at) == ("v2", V2_START)


def test_compare_says_when_the_sides_cover_different_scorer_versions(labelled_store: tuple[str, str]) -> None:
    address, table = labelled_store
    client = client_of(address, table)
    page = client.get("/compare?a_eval=eval-old&b_eval=eval-new").text
    note = page[page.index('id="version-note"') : page.index('id="deltas"')]
    assert re.findall(r'<li data-scorer="(\w+)">([^<]+)</li>', note) == [
        ("helpfulness", "helpfulness: A v1 · B v2")
    ]
    assert 'id="version-note"' not in client.get("/compare?a_eval=eval-new&b_eval=eval-new").text
    with Reader(address, table=table) as reader:
        data = _pages.compare(
            reader, Filters(eval_id="eval-old"), Filters(since=V2_START - timedelta(days=30))
        )
    assert data["versions"] == [{"scorer_id": "helpfulness", "a": ["v1"], "b": ["v1", "v2"]}]
    deltas = {d["scorer_id"]: d["delta"] for d in data["deltas"]}
    assert (deltas["helpfulness"].n_a, deltas["helpfulness"].n_b) == (20, 100)
    assert deltas["helpfulness"].mean_b == pytest.approx((20 * 0.7 + 40 * 0.9 + 40 * 0.1) / 100)


def test_the_html_report_shows_corrected_rates_and_version_marks(
    labelled_store: tuple[str, str], tmp_path: Path
) -> None:
    address, table = labelled_store
    plain = write_report(address, tmp_path / "plain.html", table=table).read_text()
    assert "data-corrected" not in plain and 'id="s0-corrected"' not in plain
    add_labels(address, table)
    page = write_report(address, tmp_path / "report.html", table=table).read_text()
    corrected = corrected_pass_rate(40, 80, CONFUSION).estimate
    assert 'data-corrected="helpfulness"' in page and f"corrected {rate(corrected)}" in page
    assert 'id="s0-corrected"' in page and 'id="s1-corrected"' not in page  # helpfulness, then tone
    data = chart_data(page)
    changed = int(V2_START.timestamp())
    assert [m["x"] for m in data["s0-trend"]["marks"]] == [changed - changed % 86400]
    assert data["s1-trend"]["marks"] == [] and data["spark-helpfulness"]["marks"]
