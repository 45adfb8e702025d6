"""A naive datetime means UTC in every read of the store, whatever the machine's time zone: the report,
the drops, the runs and the viewer put it in the same hour as its UTC twin."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from agentevals import ScoreResult
from agentevals._evals._catalog import dropped_counts
from agentevals._evals._report import build_report
from agentevals._store._catalog_tables import DropCount
from agentevals._store._hours import as_utc, bucket_start, hour_after, hour_bucket, hour_start
from agentevals._store._store import open_store
from agentevals._view import _rolled
from agentevals._view._queries import Filters, Reader
from agentevals.sinks import SQLiteSink

#: Half past ten, naive: 10:30 UTC (05:30 in New York, where the machine's clock is set).
NAIVE = datetime(2026, 1, 2, 10, 30)
AWARE = NAIVE.replace(tzinfo=UTC)


@pytest.fixture
def new_york(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The machine's local time is New York's (UTC-5 in January), restored afterwards."""
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
async def store(tmp_path: Path) -> Path:
    """Scores at 10:20, 10:40 and 11:10 UTC, and runs dropped in the hours of 10:00 and 11:00."""
    path = tmp_path / "agentevals.db"
    sink = SQLiteSink(path)
    moments = [
        datetime(2026, 1, 2, hour, minute, tzinfo=UTC) for hour, minute in ((10, 20), (10, 40), (11, 10))
    ]
    await sink.write(
        [
            ScoreResult(
                scorer_id="a",
                scorer_name="a",
                score=1.0,
                run_id=f"run-{n}",
                entity="bot",
                source="live",
                created_at=moment,
            )
            for n, moment in enumerate(moments)
        ]
    )
    await sink.write_drops(
        [
            DropCount("2026-01-02T10", "bot", "a", "overflow", 1),
            DropCount("2026-01-02T11", "bot", "a", "overflow", 2),
        ]
    )
    await sink.close()
    return path


def test_a_naive_moment_is_in_its_utc_hour_whatever_the_local_time_zone(new_york: None) -> None:
    assert as_utc(NAIVE) == AWARE
    assert hour_bucket(NAIVE) == hour_bucket(AWARE) == "2026-01-02T10"
    assert hour_start(NAIVE) == datetime(2026, 1, 2, 10, tzinfo=UTC)
    assert hour_after(NAIVE) == hour_after(AWARE) == datetime(2026, 1, 2, 11, tzinfo=UTC)
    on_the_hour = datetime(2026, 1, 2, 11)
    assert hour_after(on_the_hour) == bucket_start("2026-01-02T11")
    assert hour_bucket(datetime(2026, 1, 2, 5, 30, tzinfo=ZoneInfo("America/New_York"))) == "2026-01-02T10"


def test_every_read_puts_a_naive_since_in_the_same_hour_as_its_utc_twin(new_york: None, store: Path) -> None:
    naive, aware = build_report(store, since=NAIVE), build_report(store, since=AWARE)
    assert naive.total == aware.total == 2  # 10:40 from the score rows, 11:10 from the rollup
    assert [(g.key["scorer_id"], g.count) for g in naive.by_scorer] == [("a", 2)]
    assert naive.runs == aware.runs == 2
    with open_store(store) as opened:
        assert dropped_counts(opened, since=NAIVE) == dropped_counts(opened, since=AWARE) == {"a": 2}
        assert [run.run_id for run in opened.runs(since=NAIVE)] == [
            run.run_id for run in opened.runs(since=AWARE)
        ]
    with Reader(store) as reader, reader.session() as q:
        assert q.scorers_since(NAIVE) == q.scorers_since(AWARE) == ["a"]
        for since in (NAIVE, AWARE):
            totals = _rolled.outcome_totals(q, Filters(since=since, until=datetime(2026, 1, 2, 11, 30)))
            assert sum(t.rows for t in totals) == 2, since
