"""A live scorer that raises is visible in the log: the first failure of each kind with its traceback,
then counts at most once a minute per scorer."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from engine_helpers import runs

from agentevals import Run, ScoringEngine, create_scorer
from agentevals._model._failure import failure_record
from agentevals._scoring._score_once import FailureLog
from agentevals.engine import DeliveryOptions
from agentevals.sinks import MemorySink


def _flaky(run: Run, **_: object) -> float:
    if run.run_id.endswith("7"):
        raise KeyError("missing key")
    return 1 / 0


FLAKY = create_scorer(id="flaky").generate_score(_flaky)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "agentevals.engine" and r.levelno == logging.WARNING
    ]


def test_the_first_failure_of_each_kind_is_logged_with_its_traceback(
    caplog: pytest.LogCaptureFixture, dead_letter: Path
) -> None:
    caplog.set_level(logging.WARNING, logger="agentevals.engine")
    scorer = create_scorer(id="flaky").generate_score(_flaky)
    engine = ScoringEngine([scorer], sinks=[MemorySink()], delivery=DeliveryOptions(dead_letter=dead_letter))
    for run in runs(20):
        engine.submit(run)
    assert engine.shutdown().failed == 20
    lines = _warnings(caplog)
    assert len(lines) == 2, lines  # ZeroDivisionError and KeyError, once each: no line per run
    zero = next(line for line in lines if "ZeroDivisionError" in line)
    assert "scorer 'flaky' failed on run run-0" in zero and "Traceback" in zero and "_flaky" in zero
    assert any("KeyError" in line and "Traceback" in line for line in lines)


def test_later_failures_are_counted_in_a_summary_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="agentevals.engine")
    log = FailureLog(interval=0.0)
    for run in runs(3):
        try:
            _flaky(run)
        except ZeroDivisionError as err:
            log.note(failure_record(scorer=FLAKY, run=run, error=err), err)
    lines = _warnings(caplog)
    assert (
        "Traceback" in lines[0]
        and "failed 1 time(s) since the last report (ZeroDivisionError ×1)" in lines[1]
    )
    assert len(lines) == 3


def test_the_logged_error_text_goes_through_the_redactor(
    caplog: pytest.LogCaptureFixture, dead_letter: Path
) -> None:
    caplog.set_level(logging.WARNING, logger="agentevals.engine")

    def leaky(run: Run, **_: object) -> float:
        raise ValueError(f"cannot score {run.input_text}")

    def hide(record):  # type: ignore[no-untyped-def]
        return record.model_copy(update={"input": "<x>", "error_message": "<hidden>"})

    engine = ScoringEngine(
        [create_scorer(id="leaky").generate_score(leaky)],
        sinks=[MemorySink()],
        redact=hide,
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    engine.submit(Run(input="secret@example.com", output="a"))
    assert engine.shutdown().failed == 1
    (line,) = _warnings(caplog)
    assert "secret@example.com" not in line and "<hidden>" in line
