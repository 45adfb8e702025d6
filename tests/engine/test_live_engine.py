"""``agentevals.live.Engine`` is everything an integration calls on an engine, ``submit_lazy`` included:
a custom engine that implements it works with any integration, one that does not is refused at once."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from engine_helpers import length_scorer

from agentevals import FlushReport, Run, ScoringEngine
from agentevals.engine import EngineStats
from agentevals.live import Engine, LiveScoring


class LazyEngine:
    """A custom engine: keeps the builds it is given, and builds a run only when it is flushed."""

    def __init__(self) -> None:
        self.pending: list[tuple[str, str | None, Callable[[], Run]]] = []
        self.built: list[Run] = []

    def submit(self, run: Run) -> bool:
        self.built.append(run)
        return True

    def submit_lazy(self, build: Callable[[], Run], *, run_id: str, trace_id: str | None = None) -> bool:
        self.pending.append((run_id, trace_id, build))
        return True

    def flush(self, timeout: float = 30.0) -> FlushReport:
        self.built += [build() for _, _, build in self.pending]
        self.pending.clear()
        return FlushReport(completed=True)

    async def aflush(self, timeout: float = 30.0) -> FlushReport:
        return self.flush(timeout)

    def shutdown(self, timeout: float = 30.0) -> FlushReport:
        return self.flush(timeout)

    def stats(self) -> EngineStats:
        return EngineStats(submitted=len(self.built) + len(self.pending))


class SubmitOnly:
    def submit(self, run: Run) -> bool:
        return True


class Replies(LiveScoring):
    """An integration that hands its engine each reply unbuilt."""

    def on_reply(self, reply_id: str, prompt: str, reply: str) -> bool:
        return self.submit_lazy(lambda: Run(run_id=reply_id, input=prompt, output=reply), run_id=reply_id,
                                trace_id=f"trace-{reply_id}")  # fmt: skip


def test_an_integration_hands_a_custom_engine_its_runs_unbuilt() -> None:
    engine = LazyEngine()
    assert isinstance(engine, Engine)
    replies = Replies(engine=engine)
    assert replies.on_reply("r1", "hi", "hello")
    assert [(run_id, trace_id) for run_id, trace_id, _ in engine.pending] == [("r1", "trace-r1")]
    assert engine.built == []  # nothing built on the agent's thread
    assert replies.flush()
    assert [(run.run_id, run.output_text) for run in engine.built] == [("r1", "hello")]


def test_an_engine_without_submit_lazy_is_refused_naming_the_protocol() -> None:
    assert not isinstance(SubmitOnly(), Engine)
    with pytest.raises(TypeError, match=r"engine= must be an agentevals\.live\.Engine \(submit, submit_lazy"):
        Replies(engine=SubmitOnly())  # type: ignore[arg-type]


def test_the_scoring_engine_is_an_engine() -> None:
    engine = ScoringEngine(length_scorer(), sinks=[])
    try:
        assert isinstance(engine, Engine)
    finally:
        engine.shutdown(timeout=5)


def test_a_failing_submit_lazy_is_logged_never_raised(caplog: pytest.LogCaptureFixture) -> None:
    class Failing(LazyEngine):
        def submit_lazy(self, build: Callable[[], Run], *, run_id: str, trace_id: str | None = None) -> bool:
            raise RuntimeError("engine exploded")

    with caplog.at_level(logging.ERROR, logger="agentevals.capture"):
        assert Replies(engine=Failing()).on_reply("r1", "hi", "hello") is False
    assert "could not submit run r1" in caplog.text


def test_a_failing_submit_is_logged_never_raised(caplog: pytest.LogCaptureFixture) -> None:
    class Failing(LazyEngine):
        def submit(self, run: Run) -> bool:
            raise RuntimeError("engine exploded")

    with caplog.at_level(logging.ERROR, logger="agentevals.capture"):
        assert Replies(engine=Failing()).submit(Run(run_id="r2", input="hi", output="hello")) is False
    assert "could not submit run r2" in caplog.text


def test_a_scoring_engine_takes_the_submits_itself_without_a_wrapper() -> None:
    engine = ScoringEngine(length_scorer(), sinks=[])
    try:
        replies = Replies(engine=engine)
        assert replies.submit.__self__ is engine  # type: ignore[attr-defined]
        assert replies.submit_lazy.__self__ is engine  # type: ignore[attr-defined]
        assert replies.on_reply("r1", "hi", "hello")
        assert engine.flush(10)
        assert engine.stats().scored == 1
    finally:
        engine.shutdown(timeout=5)


def test_a_custom_engine_is_guarded_once_and_keeps_its_identity() -> None:
    engine = LazyEngine()
    replies = Replies(engine=engine)
    assert replies.engine is engine
    guard = replies.submit.__self__  # type: ignore[attr-defined]
    assert guard is not engine and replies.submit_lazy.__self__ is guard  # type: ignore[attr-defined]
