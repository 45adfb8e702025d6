"""Only failures of the judge itself count toward the breaker: a run holding a lone surrogate is judged
(its text made sendable), a request that cannot be encoded fails alone, unretried and uncounted, and
transport failures still open it. Through the real LiteLLM path against 127.0.0.1."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import accounted

from agentevals import PromptStep, Run, ScoringEngine, create_scorer
from agentevals.engine import (
    Breaker,
    BreakerStatus,
    DeliveryOptions,
    EngineStats,
    ExitOptions,
    ScoringOptions,
)
from agentevals.errors import JudgeError
from agentevals.results import ScoreFailure, ScoreResult, ScoreSkipped
from agentevals.sinks import MemorySink
from agentevals.testing import FakeJudgeServer


def judged(judge: Any) -> Any:
    return create_scorer(id="judged", judge=judge).generate_score(
        PromptStep(description="grade", create_prompt=lambda run: f"Grade this: {run.input_text}")
    )


def engine_for(judge: Any, memory: MemorySink, tmp_path: Path) -> ScoringEngine:
    return ScoringEngine(
        [judged(judge)],
        sinks=[memory],
        scoring=ScoringOptions(max_concurrency=1),
        delivery=DeliveryOptions(dead_letter=tmp_path / "dead.jsonl"),
        exit=ExitOptions(handle_sigterm=False),
        breaker=Breaker(failures=5, failure_rate=None),
    )


def only_breaker(stats: EngineStats) -> BreakerStatus:
    (status,) = stats.breakers.values()
    return status


def runs(n: int, text: str) -> list[Run]:
    return [Run(run_id=f"run-{i}", input=f"{text} {i}", output="answer") for i in range(n)]


def test_a_run_with_a_lone_surrogate_is_judged(tmp_path: Path) -> None:
    memory = MemorySink()
    with FakeJudgeServer(responder=lambda _: {"score": 1.0}) as server:
        engine = engine_for(server.judge(), memory, tmp_path)
        for run in runs(10, "question \ud800 cut in half"):
            engine.submit(run)
        assert engine.flush(timeout=60)
        engine.shutdown()
    assert len(memory.records) == 10 and all(isinstance(r, ScoreResult) for r in memory.records)
    assert all("question \ufffd cut in half" in request.prompt for request in server.requests)
    assert only_breaker(accounted(engine)).failures == 0


def test_requests_that_cannot_be_encoded_fail_alone_and_leave_the_breaker_closed(tmp_path: Path) -> None:
    """Every call fails before it is sent: each run gets its own failure saying why (none is skipped as
    'judge unavailable'), at one attempt each, and the breaker counts none of them."""
    memory = MemorySink()
    with FakeJudgeServer(responder=lambda _: {"score": 1.0}) as server:
        judge = server.judge(completion_kwargs={"user": "customer \udc80"})
        engine = engine_for(judge, memory, tmp_path)
        for run in runs(10, "question"):
            engine.submit(run)
        assert engine.flush(timeout=60)
        engine.shutdown()
    assert server.requests == []
    assert len(memory.records) == 10 and not any(isinstance(r, ScoreSkipped) for r in memory.records)
    for record in memory.records:
        assert isinstance(record, ScoreFailure)
        assert "could not be sent" in record.error_message and "completion_kwargs" in record.error_message
        assert [call.attempts for call in record.judge_calls] == [1]
    status = only_breaker(accounted(engine))
    assert (status.state, status.opened, status.failures, status.skipped) == ("closed", 0, 0, 0)


async def test_an_unencodable_request_is_a_judge_error_at_one_attempt() -> None:
    with FakeJudgeServer(responder=lambda _: "fine") as server, pytest.raises(JudgeError) as info:
        await server.judge(completion_kwargs={"user": "\ud800"}).complete("grade this")
    assert info.value.attempts == 1 and server.requests == []
    assert isinstance(info.value.__cause__, UnicodeEncodeError)


def test_transport_failures_still_open_it(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on: every connection is refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    memory = MemorySink()
    with FakeJudgeServer() as server:
        judge = server.judge(api_base=f"http://127.0.0.1:{port}/v1", max_attempts=1)
        engine = engine_for(judge, memory, tmp_path)
        for run in runs(10, "question"):
            engine.submit(run)
        assert engine.flush(timeout=60)
        engine.shutdown()
    status = only_breaker(accounted(engine))
    assert (status.state, status.opened, status.failures, status.skipped) == ("open", 1, 5, 5)
    kinds = [type(record).__name__ for record in sorted(memory.records, key=lambda r: int(r.run_id[4:]))]
    assert kinds == ["ScoreFailure"] * 5 + ["ScoreSkipped"] * 5


def test_a_request_that_failed_on_this_side_tells_the_breaker_nothing() -> None:
    from agentevals._scoring._limits._gate import answered

    encoding = UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
    local = JudgeError("the request could not be encoded", model="openai/m", attempts=1)
    local.__cause__ = encoding
    assert answered(local) is None  # neither a failure nor a success of the judge
    assert answered(None) is True
