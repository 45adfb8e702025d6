"""The charts' axes: a lone time bucket is drawn with one bucket either side, histogram bars fill their
axis, counts, costs and tokens start at 0, and a chart with nothing to draw is left out with a note
(a store holding one hour of data: :func:`tests.view.conftest.hour_records`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from agentevals._view import _pages
from agentevals._view._app import create_app
from agentevals._view._axes import STEP, bar_window, from_zero, time_window
from agentevals._view._queries import Bucket, Filters, Reader
from tests.view.conftest import HOUR, HOUR_RUNS

DAY = int(HOUR.replace(hour=0).timestamp())
START = {"hour": int(HOUR.timestamp()), "day": DAY, "week": DAY - HOUR.weekday() * 86400}


def test_a_lone_time_bucket_has_one_bucket_either_side() -> None:
    assert time_window([7200], 3600) == [3600, 10800]
    assert time_window([86400, 86400], 86400) == [0, 172800]  # one bucket, twice
    assert time_window([0, 7200, 3600], 3600) == [0, 7200]  # several: first to last, as they are
    assert time_window([], 3600) is None
    assert STEP == {"hour": 3600, "day": 86400, "week": 604800}


def test_histogram_bars_fill_their_axis() -> None:
    assert bar_window([0.0, 0.25, 0.5, 0.75]) == [0.0, 1.0]  # the last bar's right edge
    assert bar_window([2.0]) == [1.0, 4.0]  # every score 2: a bar 1 wide, 1 either side
    assert bar_window([]) is None


def test_amounts_start_at_zero() -> None:
    assert from_zero([4, 5, 6]) == [0, 6.6]  # uPlot would start at 4
    assert from_zero([None, 0.0002, None]) == [0, 0.00022]
    assert from_zero([0, 0]) == [0, 1] and from_zero([None]) == [0, 1] and from_zero([]) == [0, 1]


@pytest.mark.parametrize("bucket", ["hour", "day", "week"])
def test_one_hour_of_data_is_charted_around_its_bucket(hour_store: Path, bucket: Bucket) -> None:
    start, step = START[bucket], STEP[bucket]
    with Reader(hour_store) as reader:
        judge = _pages.scorer(reader, "faithfulness", Filters(), bucket, _pages.Settings())["charts"]
        code = _pages.scorer(reader, "tool_calls", Filters(), bucket, _pages.Settings())["charts"]
    assert judge["trend"]["x"] == [start] == judge["cost"]["x"]
    assert judge["trend"]["window"] == [start - step, start + step] == judge["cost"]["window"]
    assert judge["cost"]["range"] == [0, pytest.approx(max(judge["cost"]["cost"]) * 1.1)]
    assert judge["cost"]["tokens_range"] == [0, pytest.approx(HOUR_RUNS * 340 * 1.1)]
    assert judge["histogram"]["window"] == [0.0, 1.0] and judge["histogram"]["range"] == [0, 2.2]
    assert set(code) == {"trend", "histogram"}  # a code scorer has no judge cost to chart
    assert code["histogram"] == {"x": [2.0], "y": [HOUR_RUNS], "window": [1.0, 4.0], "range": [0, 33.0]}


def test_one_hour_of_data_on_the_overview_and_its_pages(hour_store: Path) -> None:
    with Reader(hour_store) as reader:
        charts = _pages.overview(reader, Filters(), _pages.Settings(), deferred=True)["charts"]
        failing = _pages.scorer(reader, "context_recall", Filters(), "day", _pages.Settings())
    for scorer_id in ("exact_match", "faithfulness", "tool_calls"):
        assert charts[f"spark-{scorer_id}"]["window"] == [DAY - 86400, DAY + 86400]
    assert charts["spark-context_recall"] == {"x": [], "y": [], "window": None}
    assert failing["charts"] == {} and failing["outcomes"] == {"failed": HOUR_RUNS}

    client = TestClient(create_app(hour_store, warm=False))
    page = client.get("/scorers/tool_calls").text
    assert 'data-chart="trend"' in page and 'data-chart="histogram"' in page
    assert 'data-chart="cost"' not in page and 'data-empty="cost">No judge cost' in page
    page = client.get("/scorers/faithfulness").text
    assert 'data-chart="cost"' in page and "data-empty" not in page
    page = client.get("/scorers/context_recall").text
    assert 'data-chart="' not in page
    assert 'data-empty="trend"' in page and 'data-empty="histogram"' in page and 'data-empty="cost"' in page
