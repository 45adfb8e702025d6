"""Logging, JSONL, callback and memory sinks; the shared row mapping."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path

import pytest
from sink_helpers import sample_records

from agentevals import ScoreRecord
from agentevals._store._row import RUN_COLUMNS, record_from_json, record_to_json, run_to_row
from agentevals.sinks import (
    COLUMNS,
    CallbackSink,
    JsonlSink,
    LoggingSink,
    MemorySink,
    RetryPolicy,
    Sink,
    as_sink,
    record_to_row,
)
from agentevals.sinks._retry import retried, write_once
from agentevals.sinks._thread import Handoff


def test_row_has_every_column_and_flattens_judge_usage() -> None:
    result, *_, failure = sample_records(2)
    row = record_to_row(result)
    assert tuple(row) == COLUMNS
    assert (row["judge_model"], row["prompt_tokens"], row["completion_tokens"]) == (
        "openai/gpt-4o-mini",
        17,
        8,
    )
    assert row["cost_usd"] == pytest.approx(0.003)
    assert json.loads(row["analyze_step_result"]) == {"verdicts": ["yes", "no"]}
    assert "output" not in row and (row["outcome"], row["scorer_version"]) == ("scored", None)
    run = run_to_row(result)
    assert tuple(run) == RUN_COLUMNS and run["run_id"] == row["run_id"] == "run-0"
    assert json.loads(run["output"])[0]["content"] == "a0"
    assert json.loads(row["metadata"]) == {"version": 2, "nan": None}
    assert row["error_type"] is None and row["generate_score_prompt"] is None
    frow = record_to_row(failure)
    assert (frow["score"], frow["error_type"], frow["error_message"]) == (
        None,
        "TimeoutError",
        "took too long",
    )
    assert frow["outcome"] == "failed"
    assert record_to_row(result)["id"] == row["id"] != frow["id"]  # stable per record


def test_record_json_round_trip_keeps_judge_calls_and_type() -> None:
    for record in sample_records(2):
        back = record_from_json(json.loads(json.dumps(record_to_json(record))))
        assert type(back) is type(record)
        assert back.judge_calls == record.judge_calls
        assert record_to_row(back)["id"] == record_to_row(record)["id"]


async def test_logging_sink_one_line_per_record(caplog: pytest.LogCaptureFixture) -> None:
    records = sample_records(2)
    with caplog.at_level(logging.DEBUG, logger="scores.test"):
        await LoggingSink(level=logging.DEBUG, logger="scores.test").write(records)
        await LoggingSink(level=logging.DEBUG, logger=logging.getLogger("scores.test")).write([])
    lines = [r for r in caplog.records if r.name == "scores.test"]
    assert len(lines) == 3 and all(r.levelno == logging.DEBUG for r in lines)
    kind, payload = lines[0].getMessage().split(" ", 1)
    assert kind == "score" and json.loads(payload)["run_id"] == "run-0"
    kind, payload = lines[2].getMessage().split(" ", 1)
    assert kind == "score-error" and json.loads(payload)["error_type"] == "TimeoutError"
    assert lines[0].agentevals_record is records[0]  # type: ignore[attr-defined]


async def test_logging_sink_skips_work_below_the_level(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="scores.quiet"):
        await LoggingSink(level=logging.INFO, logger="scores.quiet").write(sample_records(1))
    assert not [r for r in caplog.records if r.name == "scores.quiet"]


def test_jsonl_sink_is_safe_across_threads_and_sinks(tmp_path: Path) -> None:
    path = tmp_path / "out" / "scores.jsonl"
    records = sample_records(25)

    def writer() -> None:
        sink = JsonlSink(path)  # separate sinks sharing one file, each on its own loop
        for _ in range(10):
            asyncio.run(sink.write(records))
        asyncio.run(sink.close())

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 8 * 10 * len(records)
    rows = [json.loads(line) for line in lines]
    assert set(rows[0]) == {*COLUMNS, "run"} and set(rows[0]["run"]) == set(RUN_COLUMNS)
    assert (
        rows[0]["run"]["input"] == {"question": "q0"} and rows[0]["created_at"] == "2026-01-02T03:04:05+00:00"
    )
    assert sum(1 for r in rows if r["error_type"] == "TimeoutError") == 80


async def test_callback_sink_sync_async_and_wrapping() -> None:
    seen: list[ScoreRecord] = []
    callers: set[str] = set()

    def sync_cb(record: ScoreRecord) -> None:
        callers.add(threading.current_thread().name)
        seen.append(record)

    async def async_cb(record: ScoreRecord) -> None:
        seen.append(record)

    records = sample_records(2)
    for sink in (CallbackSink(sync_cb), as_sink(async_cb)):
        await sink.write(records)
        await sink.close()
    assert len(seen) == 6
    assert threading.current_thread().name not in callers  # sync callbacks run off the loop
    assert isinstance(MemorySink(), Sink) and as_sink(sync_cb).name.startswith("callback:")  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="not a sink"):
        as_sink(3)


async def test_callback_sink_propagates_errors_for_retry() -> None:
    def broken(record: ScoreRecord) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        await CallbackSink(broken).write(sample_records(1))


def test_handoff_runs_in_order_and_stops_a_round_at_its_first_error() -> None:
    handoff = Handoff("test-handoff")
    seen: list[int] = []
    for i in range(5):
        handoff.submit(lambda i=i: seen.append(i))
    handoff.join()
    assert seen == [0, 1, 2, 3, 4]
    handoff.submit(lambda: seen.append(1 // 0))
    handoff.submit(lambda: seen.append(5))  # skipped: an earlier one failed
    with pytest.raises(ZeroDivisionError):
        handoff.join()
    handoff.join()  # nothing pending
    handoff.submit(lambda: seen.append(5))  # a new round runs
    handoff.join()
    assert seen == [0, 1, 2, 3, 4, 5]
    handoff.stop()
    handoff.submit(lambda: seen.append(6))  # a stopped handoff starts a new thread
    handoff.join()
    handoff.stop()
    assert seen[-1] == 6


async def test_retried_backs_off_exponentially_and_reports_each_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waits: list[float] = []

    async def no_sleep(delay: float) -> None:
        waits.append(delay)

    monkeypatch.setattr(asyncio, "sleep", no_sleep)
    calls: list[int] = []

    async def flaky(records: object) -> None:
        calls.append(len(calls))
        if len(calls) < 4:
            raise ConnectionError(f"attempt {len(calls)}")

    errors: list[BaseException] = []
    policy = RetryPolicy(attempts=5, initial=0.1, max_wait=0.3)
    records = sample_records(1)[:1]  # one record: the callback is called once per attempt
    flaky_sink = CallbackSink(flaky)
    assert await retried(lambda: write_once(flaky_sink, records, None), policy, errors.append) is None
    assert waits == [0.1, 0.2, 0.3]  # doubled each time, capped at max_wait
    assert [str(e) for e in errors] == ["attempt 1", "attempt 2", "attempt 3"]

    waits.clear()
    always = RetryPolicy(attempts=2, initial=0.1, max_wait=0.3)

    async def broken(records: object) -> None:
        raise ConnectionError("down")

    broken_sink = CallbackSink(broken)
    last = await retried(lambda: write_once(broken_sink, records, None), always)
    assert isinstance(last, ConnectionError) and waits == [0.1]  # no wait after the last attempt
