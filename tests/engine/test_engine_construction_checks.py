"""Bad configuration fails at construction (scorers' judges, sinks); no sinks is visible, not silent."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import length_scorer

from agentevals import Judge, ScoringEngine, create_scorer
from agentevals.engine import DeliveryOptions
from agentevals.sinks import MemorySink, SinkConfigError
from agentevals.steps import PromptStep


def _judged(model: str) -> Any:
    return create_scorer(id="judged", judge=Judge(model=model)).generate_score(
        PromptStep(description="rate", create_prompt=lambda run: f"Rate {run.output_text}")
    )


class _CheckedSink:
    def __init__(self, error: Exception | None) -> None:
        self.error = error

    def check(self) -> None:
        if self.error is not None:
            raise self.error

    async def write(self, records: Sequence[Any]) -> None:
        return None

    async def close(self) -> None:
        return None


def test_a_judge_without_credentials_fails_at_construction_naming_the_scorer(
    monkeypatch: pytest.MonkeyPatch, dead_letter: Path
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match=r"scorer 'judged' cannot score: .*check=False"):
        ScoringEngine(
            [_judged("openai/gpt-4o-mini")], sinks=[], delivery=DeliveryOptions(dead_letter=dead_letter)
        )
    engine = ScoringEngine(
        [_judged("openai/gpt-4o-mini")],
        sinks=[],
        delivery=DeliveryOptions(dead_letter=dead_letter),
        check=False,
    )
    assert engine.shutdown()


def test_a_sink_check_that_fails_is_a_value_error_naming_the_sink(
    caplog: pytest.LogCaptureFixture, dead_letter: Path
) -> None:
    broken = _CheckedSink(SinkConfigError("install psycopg"))
    with pytest.raises(ValueError, match=r"sink '_CheckedSink' cannot store records: install psycopg"):
        ScoringEngine(
            [length_scorer()], sinks=[MemorySink(), broken], delivery=DeliveryOptions(dead_letter=dead_letter)
        )
    ScoringEngine(
        [length_scorer()], sinks=[broken], delivery=DeliveryOptions(dead_letter=dead_letter), check=False
    ).shutdown()
    later = _CheckedSink(SinkConfigError("server not reachable", transient=True))
    ScoringEngine(
        [length_scorer()], sinks=[later], delivery=DeliveryOptions(dead_letter=dead_letter)
    ).shutdown()  # only logged
    assert "server not reachable" in caplog.text


def test_no_sinks_warns_once_and_prints_results_when_logging_is_not_configured(tmp_path: Path) -> None:
    code = (
        "from agentevals import Run, ScoringEngine, create_scorer\n"
        "from agentevals.engine import DeliveryOptions\n"
        "s = create_scorer(id='len').generate_score(lambda run, **_: 1.0)\n"
        f"kw = dict(delivery=DeliveryOptions(dead_letter={str(tmp_path / 'dl.jsonl')!r}))\n"
        "for _ in range(2):\n"
        "    engine = ScoringEngine([s], **kw)\n"
        "    engine.submit(Run(run_id='r1', input='q', output='a'))\n"
        "    assert engine.shutdown()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    err = done.stderr
    assert err.count("has no sinks") == 1, err
    assert "sinks=[SQLiteSink('agentevals.db')]" in err
    assert err.count('score {"scorer_id": "len", "run_id": "r1"') == 2, err


def test_once_logging_is_configured_results_are_not_printed_twice(tmp_path: Path) -> None:
    code = (
        "import logging\n"
        "from agentevals import Run, ScoringEngine, create_scorer\n"
        "from agentevals.engine import DeliveryOptions\n"
        "s = create_scorer(id='len').generate_score(lambda run, **_: 1.0)\n"
        f"engine = ScoringEngine([s], delivery=DeliveryOptions(dead_letter={str(tmp_path / 'dl.jsonl')!r}))\n"
        "logging.basicConfig(level=logging.INFO, format='configured %(message)s')\n"
        "engine.submit(Run(run_id='r1', input='q', output='a'))\n"
        "assert engine.shutdown()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stderr.count('"run_id": "r1"') == 1, done.stderr
    assert 'configured score {"scorer_id": "len"' in done.stderr
