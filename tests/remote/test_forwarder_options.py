"""``broker=`` options that cannot work are a clear ValueError at construction (those of
``BrokerOptions`` alone: ``test_engine_options``); a broker that is down is not (runs wait for it)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from forwarder_helpers import free_port

from agentevals import ScoringEngine, create_scorer
from agentevals.engine import BrokerOptions
from agentevals.sinks import MemorySink

_SCORER = create_scorer(id="s").generate_score(lambda run, **_: 1.0)
_URL = "amqp://guest:guest@127.0.0.1:5672/"


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"broker": "kafka://127.0.0.1:9092"}, "unknown scheme 'kafka'.*amqp://"),
        ({"broker": "127.0.0.1:5672"}, "unknown scheme"),
        ({"broker": "amqp://guest:guest@127.0.0.1:notaport/"}, "cannot be read"),
        ({"broker": _URL, "sinks": [MemorySink()]}, "agentevals worker --sink"),
        ({"broker": _URL, "redact": lambda record: record}, "redact= must be a mask"),
        ({"broker": BrokerOptions(_URL, spool=Path(__file__).parent)}, "cannot be opened|not a writable"),
    ],
)
def test_options_that_cannot_work_are_a_clear_value_error(options: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        ScoringEngine([_SCORER], **options)


def test_a_password_is_not_shown_in_the_error() -> None:
    with pytest.raises(ValueError) as caught:
        ScoringEngine([_SCORER], broker="ftp://ann:s3cret@127.0.0.1/")
    assert "s3cret" not in str(caught.value)


def test_without_dramatiq_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "dramatiq", None)  # what an environment without it raises
    with pytest.raises(ValueError, match=r'pip install "agentevals-core\[workers\]"'):
        ScoringEngine([_SCORER], broker=_URL)


def test_a_broker_that_is_down_is_no_error_with_check(tmp_path: Path) -> None:
    for url in (f"amqp://guest:guest@127.0.0.1:{free_port()}/", f"redis://127.0.0.1:{free_port()}/0"):
        engine = ScoringEngine([_SCORER], broker=BrokerOptions(url, spool=tmp_path / "spool.db"), check=True)
        assert engine.sinks == []
        engine.shutdown(0.2)


def test_judges_are_not_checked_here_with_a_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentevals.scorers import create_answer_relevancy_scorer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    judged = create_answer_relevancy_scorer("openai/gpt-4o-mini")
    with pytest.raises(ValueError, match="cannot score"):
        ScoringEngine([judged], sinks=[MemorySink()])  # in process: its judge needs a key here
    engine = ScoringEngine([judged], broker=f"amqp://guest:guest@127.0.0.1:{free_port()}/")
    engine.shutdown(0.2)
