"""The viewer's numbers read from the rollup and the score histogram equal the ones read from the score
rows: the scorer page (over time, percentiles, histogram, entity breakdown, failures, cost), the
overview's per-entity sparklines, the filter choices; including the partial first and last hours of a
time range and the filters that need the rows (an eval id, a threshold that is not a whole bin)."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from agentevals._store._bins import score_bin
from agentevals._store._view_reads import filtered
from agentevals._view import _pages, _rolled, _scorer_numbers
from agentevals._view._app import create_app
from agentevals._view._queries import Bucket, Filters, Reader
from agentevals._view._thresholds import Bound
from tests.view.conftest import generated_records

RANGES = [
    (None, None, None),
    (timedelta(days=-9, minutes=-17), None, None),  # a partial first hour read from the rows
    (timedelta(days=-20, minutes=-41), timedelta(days=-3, minutes=-5), "support_agent"),  # both ends
    (timedelta(days=-2, minutes=-50), timedelta(days=-2, minutes=-20), None),  # within one hour
]


def _filters(since: timedelta | None, until: timedelta | None, entity: str | None) -> Filters:
    newest = max(r.created_at for r in generated_records())
    return Filters(
        since=None if since is None else newest + since,
        until=None if until is None else newest + until,
        entity=entity,
    )


def _chosen(f: Filters, scorer_id: str) -> list[Any]:
    return [
        r
        for r in generated_records()
        if r.scorer_id == scorer_id
        and (f.since is None or r.created_at >= f.since)
        and (f.until is None or r.created_at < f.until)
        and (f.entity is None or r.entity == f.entity)
        and (f.eval_id is None or r.eval_id == f.eval_id)
    ]


def _label(moment: datetime, bucket: Bucket) -> int:
    if bucket == "hour":
        start = moment.replace(minute=0, second=0, microsecond=0)
    else:
        start = moment.replace(hour=0, minute=0, second=0, microsecond=0)
        if bucket == "week":
            start -= timedelta(days=start.weekday())
    return int(start.timestamp())


def _nearest_rank(scores: list[float], q: float) -> float:
    ordered = sorted(scores)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]


def _assert_binned(shown: float | None, exact: float) -> None:
    """A percentile from the histogram: its bin's lower edge, kept within the exact extremes."""
    assert shown is not None and exact - 0.01 - 1e-9 <= shown <= exact


@pytest.mark.parametrize("bucket", ["hour", "day", "week"])
@pytest.mark.parametrize(("since", "until", "entity"), RANGES)
def test_scorer_page_from_the_aggregates_matches_the_records(
    generated_store: Path,
    since: timedelta | None,
    until: timedelta | None,
    entity: str | None,
    bucket: Bucket,
) -> None:
    f = _filters(since, until, entity)
    mine = _chosen(f, "faithfulness")
    settings = _pages.Settings({"faithfulness": 0.7})
    with Reader(generated_store) as reader:
        data = _pages.scorer(reader, "faithfulness", f, bucket, settings)
        with reader.session() as q:  # the page was read from the rollup and the histogram
            totals = _rolled.scorer_totals(q, "faithfulness", f, bucket)
            numbers = _scorer_numbers.from_aggregates(
                totals, _rolled.scorer_bins(q, "faithfulness", f, bucket), 70
            )
            versions = q.by_version_and_models("faithfulness", f)
    assert _scorer_numbers.in_range(totals)
    expected = _scorer_numbers.page(
        "faithfulness", Bound(0.7, None, "--pass-threshold"), numbers, versions, bucket
    )
    assert data == expected

    scores = [r.score for r in mine if r.score is not None]
    assert data["outcomes"] == dict(Counter(r.outcome for r in mine))
    assert data["errors"] == Counter(r.error_type for r in mine if r.outcome == "failed").most_common()
    summary = data["summary"]
    assert summary["scored"] == len(scores)
    assert summary["mean"] == pytest.approx(sum(scores) / len(scores))
    judged = len(scores) + sum(r.outcome == "failed" for r in mine)  # a failure counts as not passed
    assert summary["pass_rate"] == pytest.approx(sum(s >= 0.7 for s in scores) / judged)
    _assert_binned(summary["p10"], _nearest_rank(scores, 0.1))
    _assert_binned(summary["p50"], _nearest_rank(scores, 0.5))
    bars = Counter(score_bin(s) // 5 for s in scores)
    assert data["charts"]["histogram"]["y"] == [bars[i] for i in range(20)]

    by_time: dict[int, list[Any]] = defaultdict(list)
    for r in mine:
        by_time[_label(r.created_at, bucket)].append(r)
    trend, cost = data["charts"]["trend"], data["charts"]["cost"]
    assert trend["x"] == sorted(by_time) == cost["x"]
    for i, x in enumerate(trend["x"]):
        rows = by_time[x]
        chunk = [r.score for r in rows if r.score is not None]
        if chunk:
            assert trend["mean"][i] == pytest.approx(sum(chunk) / len(chunk), abs=5.1e-5)  # to 4 places
            for q, key in ((0.1, "p10"), (0.5, "p50"), (0.9, "p90")):
                _assert_binned(trend[key][i], _nearest_rank(chunk, q))
        else:
            assert trend["mean"][i] is None and trend["p50"][i] is None
        priced = [r.cost_usd for r in rows if r.cost_usd is not None]
        assert cost["cost"][i] == (pytest.approx(sum(priced)) if priced else None)
        assert cost["tokens"][i] == sum((r.prompt_tokens or 0) + (r.completion_tokens or 0) for r in rows)

    entities = {key: (n, mean, failed) for key, n, mean, failed in data["breakdowns"]["agent or chain"]}
    assert set(entities) == {r.entity for r in mine}
    for key, (n, mean, failed) in entities.items():
        rows = [r for r in mine if r.entity == key]
        chunk = [r.score for r in rows if r.score is not None]
        assert n == len(rows) and failed == sum(r.outcome == "failed" for r in rows)
        assert mean == pytest.approx(sum(chunk) / len(chunk))
    versions_shown = {key: n for key, n, _, _ in data["breakdowns"]["scorer version"]}
    assert versions_shown == dict(Counter(r.scorer_version for r in mine))


@pytest.mark.parametrize("bucket", ["hour", "week"])
@pytest.mark.parametrize(("since", "until", "entity"), RANGES)
def test_scorer_page_from_the_aggregates_equals_the_row_path(
    generated_store: Path,
    since: timedelta | None,
    until: timedelta | None,
    entity: str | None,
    bucket: Bucket,
) -> None:
    """What both paths read exactly (counts, failures, means, pass rates, cost, histogram bars, entity
    breakdown) is equal; percentiles differ by less than a bin (0.01)."""
    f = _filters(since, until, entity)
    with Reader(generated_store) as reader, reader.session() as q:
        rolled = _scorer_numbers.page(
            "faithfulness",
            Bound(0.5, None, "default"),
            _scorer_numbers.from_aggregates(
                _rolled.scorer_totals(q, "faithfulness", f, bucket),
                _rolled.scorer_bins(q, "faithfulness", f, bucket),
                50,
            ),
            [],
            bucket,
        )
        rows = _scorer_numbers.page(
            "faithfulness",
            Bound(0.5, None, "default"),
            _scorer_numbers.from_series(
                q.series("faithfulness", f, bucket, (0.5, math.inf)), q.by_entity("faithfulness", f)
            ),
            [],
            bucket,
        )
    for key in ("outcomes", "errors", "breakdowns"):
        assert _rounded(rolled[key]) == _rounded(rows[key]), key
    for key in ("scored", "mean", "pass_rate"):
        assert rolled["summary"][key] == pytest.approx(rows["summary"][key]), key
    assert rolled["charts"]["histogram"] == rows["charts"]["histogram"]
    assert _rounded(rolled["charts"]["cost"]) == _rounded(rows["charts"]["cost"])
    trend_a, trend_b = rolled["charts"]["trend"], rows["charts"]["trend"]
    assert trend_a["x"] == trend_b["x"] and trend_a["mean"] == trend_b["mean"]
    for key in ("p10", "p50", "p90"):
        for a, b in zip(trend_a[key], trend_b[key], strict=True):
            assert (a is None) == (b is None) and (a is None or b - 0.01 - 1e-9 <= a <= b)


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


@pytest.mark.parametrize(
    ("f", "threshold"),
    [
        (Filters(eval_id="eval-b"), 0.5),  # the rollup has no eval id
        (Filters(), 0.735),  # not a whole bin: the passes are counted from the rows
    ],
)
def test_scorer_page_reads_the_rows_when_the_aggregates_cannot_tell(
    generated_store: Path, f: Filters, threshold: float
) -> None:
    mine = _chosen(f, "faithfulness")
    scores = sorted(r.score for r in mine if r.score is not None)
    with Reader(generated_store) as reader:
        data = _pages.scorer(reader, "faithfulness", f, "day", _pages.Settings(default=threshold))
    assert data["outcomes"] == dict(Counter(r.outcome for r in mine))
    assert data["summary"]["mean"] == pytest.approx(sum(scores) / len(scores))
    judged = len(scores) + sum(r.outcome == "failed" for r in mine)  # a failure counts as not passed
    assert data["summary"]["pass_rate"] == pytest.approx(sum(s >= threshold for s in scores) / judged)
    if f.eval_id is not None:
        assert data["summary"]["p50"] == _nearest_rank(scores, 0.5)  # the rows' scores (to 0.001): exact
    else:  # the histogram's percentile (to 0.01), beside the exact pass rate
        assert abs(data["summary"]["p50"] - _nearest_rank(scores, 0.5)) <= 0.01
    assert sum(data["charts"]["histogram"]["y"]) == len(scores)
    assert {k: n for k, n, _, _ in data["breakdowns"]["agent or chain"]} == dict(
        Counter(r.entity for r in mine)
    )


@pytest.mark.parametrize(("since", "until", "entity"), RANGES)
def test_overview_sparklines_are_the_daily_means(
    generated_store: Path, since: timedelta | None, until: timedelta | None, entity: str | None
) -> None:
    f = _filters(since, until, entity)
    evaluated = Filters(since=f.since, until=f.until, entity=f.entity, eval_id="eval-b")  # read from the rows
    with Reader(generated_store) as reader:
        charts = _pages.overview(reader, f, _pages.Settings(), deferred=True)["charts"]
        by_rows = _pages.overview(reader, evaluated, _pages.Settings(), deferred=True)["charts"]
    for scorer_id in ("exact_match", "faithfulness", "tone"):
        for shown, chosen in ((charts, f), (by_rows, evaluated)):
            days: dict[int, list[float]] = defaultdict(list)
            for r in _chosen(chosen, scorer_id):
                if r.score is not None:
                    days[_label(r.created_at, "day")].append(r.score)
            line = shown.get(f"spark-{scorer_id}", {"x": [], "y": []})
            assert line["x"] == sorted(days)
            assert line["y"] == pytest.approx([sum(days[x]) / len(days[x]) for x in sorted(days)], abs=5.1e-5)


@pytest.mark.parametrize(("since", "until", "entity"), RANGES)
def test_overview_totals_from_the_rollup_equal_the_rows(
    generated_store: Path, since: timedelta | None, until: timedelta | None, entity: str | None
) -> None:
    f = _filters(since, until, entity)
    with Reader(generated_store) as reader, reader.session() as q:
        where, params = filtered(q.reading, f)
        scanned = q.reading.rows(
            "SELECT substr(created_at, 1, 10), scorer_id, outcome, error_type, skip_reason, COUNT(*), "
            "COUNT(score), COALESCE(SUM(score), 0), MIN(score), MAX(score), COUNT(cost_usd), "
            "COALESCE(SUM(cost_usd), 0), "
            "COALESCE(SUM(prompt_tokens), 0) + COALESCE(SUM(completion_tokens), 0) "
            f"FROM agentevals_scores{where} GROUP BY 1, 2, 3, 4, 5",
            params,
        )
        rolled = _rolled.outcome_totals(q, f)
    merged: dict[tuple[Any, ...], list[Any]] = {}
    for t in rolled:  # a day's whole hours and its partial hour are two entries
        key = (t.day, t.scorer_id, t.outcome, t.error_type, t.skip_reason)
        m = merged.setdefault(key, [0, 0, 0.0, None, None, 0, 0.0, 0])
        m[0], m[1], m[2] = m[0] + t.rows, m[1] + t.scores, m[2] + t.total
        if t.low is not None and t.high is not None:
            m[3] = t.low if m[3] is None else min(m[3], t.low)
            m[4] = t.high if m[4] is None else max(m[4], t.high)
        m[5], m[6], m[7] = m[5] + t.priced, m[6] + t.cost, m[7] + t.tokens
    assert {key: _rounded(m) for key, m in merged.items()} == {
        tuple(row[:5]): _rounded(list(row[5:])) for row in scanned
    }


def test_filter_choices_equal_a_scan_of_the_scores(generated_store: Path) -> None:
    with Reader(generated_store) as reader, reader.session() as q:
        choices = q.choices()
        assert choices["range"] == tuple(
            q.reading.rows("SELECT MIN(created_at), MAX(created_at) FROM agentevals_scores")[0]
        )
        for key, column in (("entities", "entity"), ("scorers", "scorer_id"), ("evals", "eval_id")):
            scanned = q.reading.rows(
                f"SELECT DISTINCT {column} FROM agentevals_scores WHERE {column} IS NOT NULL"
            )
            assert choices[key] == sorted(row[0] for row in scanned), key
        assert q.choices(limit=2)["scorers"] == sorted({r.scorer_id for r in generated_records()})[:2]


def test_the_scorer_page_loads_its_version_and_model_breakdowns_after_it_shows(generated_store: Path) -> None:
    client = TestClient(create_app(generated_store))
    page = client.get("/scorers/faithfulness?since=3650d&bucket=week").text
    assert 'data-fragment="/fragments/scorers/faithfulness?since=3650d&amp;bucket=week"' in page
    assert page.count('class="muted loading"') == 2  # agent model, scorer version
    fragment = client.get("/fragments/scorers/faithfulness?since=3650d")
    assert fragment.status_code == 200
    with Reader(generated_store) as reader:
        full = _pages.scorer(reader, "faithfulness", Filters(), "week", _pages.Settings())
    assert not full["deferred"]
    for title in ("agent model", "scorer version"):
        assert f'data-part="{title}"' in fragment.text
        for key, n, _, _ in full["breakdowns"][title]:
            assert f'<td>{key}</td><td class="n">{n}</td>' in fragment.text, (title, key)
    assert client.get("/fragments/scorers/faithfulness?until=soon").status_code == 400


def test_scores_outside_0_to_1_are_read_from_the_rows(tmp_path: Path) -> None:
    """A 1-5 rating: the histogram's end bins would clamp it, so the page reads the rows."""
    from agentevals import ScoreResult
    from tests.view.conftest import NOW, write_store

    ratings = [1.0, 2.5, 3.0, 4.0, 5.0, 5.0, 4.5, 2.0]
    store = write_store(
        tmp_path / "ratings.db",
        [
            ScoreResult(
                scorer_id="rating",
                scorer_name="Rating",
                score=value,
                run_id=f"run-{i}",
                entity="support_agent",
                created_at=NOW - timedelta(hours=i),
            )
            for i, value in enumerate(ratings)
        ],
    )
    with Reader(store) as reader:
        with reader.session() as q:
            assert not _scorer_numbers.in_range(_rolled.scorer_totals(q, "rating", Filters(), "day"))
        data = _pages.scorer(reader, "rating", Filters(), "day", _pages.Settings(default=3.0))
    assert data["summary"]["p50"] == _nearest_rank(ratings, 0.5)
    assert data["summary"]["pass_rate"] == pytest.approx(sum(r >= 3.0 for r in ratings) / len(ratings))
    edges, counts = data["charts"]["histogram"]["x"], data["charts"]["histogram"]["y"]
    assert edges[0] == 1.0 and sum(counts) == len(ratings) and counts[-1] == 2  # the two 5.0s


@pytest.mark.parametrize("since", [None, timedelta(days=-9, minutes=-17)])
def test_the_overview_fragment_counts_coverage_as_the_report_does(
    generated_store: Path, since: timedelta | None
) -> None:
    from agentevals._evals._report import build_report

    f = _filters(since, None, None)
    with Reader(generated_store) as reader:
        shown = _pages.overview_deferred(reader, f)["coverage"]
    report = build_report(generated_store, since=f.since, worst=0)
    assert shown == {
        c.scorer_id: {"runs": c.runs, "store_runs": c.store_runs, "share": c.share} for c in report.coverage
    }
    chosen = [r for r in generated_records() if f.since is None or r.created_at >= f.since]
    assert shown["tone"]["runs"] == len({r.run_id for r in chosen if r.scorer_id == "tone"})
    assert shown["tone"]["store_runs"] == len({r.run_id for r in chosen})


@pytest.mark.parametrize(
    "f",
    [
        _filters(timedelta(days=-9, minutes=-17), None, "billing_agent"),  # rollup + a partial hour
        Filters(eval_id="eval-b"),  # the rows
    ],
)
def test_overview_columns_follow_the_filters(generated_store: Path, f: Filters) -> None:
    with Reader(generated_store) as reader:
        data = _pages.overview(reader, f, _pages.Settings(), deferred=True)
    stored = {
        r.run_id
        for r in generated_records()
        if (f.since is None or r.created_at >= f.since) and (f.eval_id is None or r.eval_id == f.eval_id)
    }
    assert data["store_runs"] == len(stored)
    assert {s["id"] for s in data["scorers"]} == {"exact_match", "faithfulness", "tone"}
    for shown in data["scorers"]:
        mine = _chosen(f, shown["id"])
        scores = [r.score for r in mine if r.score is not None]
        assert shown["count"] == len(mine) and shown["outcomes"] == dict(Counter(r.outcome for r in mine))
        assert shown["mean"] == pytest.approx(sum(scores) / len(scores))
        priced = [r.cost_usd for r in mine if r.cost_usd is not None]
        assert shown["cost_usd"] == (pytest.approx(sum(priced)) if priced else None)
        assert shown["tokens"] == sum((r.prompt_tokens or 0) + (r.completion_tokens or 0) for r in mine)
        skips = Counter(r.skip_reason for r in mine if r.outcome == "skipped")
        assert shown["skip_reasons"] == dict(skips.most_common())
        if f.eval_id is not None:  # the rows' scores (to 0.001): exact
            assert shown["p50"] == _nearest_rank(scores, 0.5)
        else:
            _assert_binned(shown["p50"], _nearest_rank(scores, 0.5))


def test_the_histogram_read_in_day_long_parts_is_the_whole(generated_store: Path) -> None:
    f = _filters(timedelta(days=-9, minutes=-17), None, "support_agent")
    with Reader(generated_store) as reader, reader.session() as q:
        parts = _rolled.hour_ranges(q, 2)
        ranges = [hours for part in parts for hours in part]
        assert len(parts) == 2 and 30 <= len(ranges) <= 32  # 30 days of hours, a query per day
        assert ranges[0][0] is None and ranges[-1][1] is None
        assert all(a[1] == b[0] for a, b in pairwise(ranges))  # no gap, no overlap
        read: Counter[tuple[str, int]] = Counter()
        for part in parts:
            for scorer_id, index, n in _rolled.histogram_over(q, f, part):
                read[scorer_id, index] += n
        whole: Counter[tuple[str, int]] = Counter()
        for scorer_id, index, n in _rolled.histogram(q, f):
            whole[scorer_id, index] += n
    assert read == whole and whole
