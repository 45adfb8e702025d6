"""Every completed LiteLLM call reaches scoring with only ``flush()`` after it, even when LiteLLM's own
success callback never comes (``asyncio.run`` closes the loop first). Real LiteLLM, fake server."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm
from agentevals_litellm import ScoringLogger

from agentevals import Scorer, create_scorer
from agentevals.sinks import MemorySink
from agentevals.testing import FakeJudgeServer

MODEL = "openai/gpt-4o-mini"


@pytest.fixture
def server() -> Iterator[FakeJudgeServer]:
    with FakeJudgeServer(responder=lambda request: f"re: {request.prompt}") as fake:
        yield fake


def reply_scorer() -> Scorer:
    """1.0 when the run's output is the fake server's reply."""
    return create_scorer(id="replied").generate_score(
        lambda run, **_: float(run.output_text.startswith("re:"))
    )


def asked(record: Any) -> str:
    """The user message a scored call sent."""
    return str(record.input.input_messages[-1].content)


def call_kwargs(server: FakeJudgeServer, text: str) -> dict[str, object]:
    return {
        "model": MODEL,
        "api_base": server.url,
        "api_key": "fake-key",
        "messages": [{"role": "user", "content": text}],
    }


def test_every_sync_and_async_call_is_scored_after_asyncio_run(server: FakeJudgeServer) -> None:
    """20 sync calls, then 20 async calls in one ``asyncio.run(gather(...))``, then ``flush()``: 40 of 40
    scored, 20 times over."""
    memory = MemorySink()
    logger = ScoringLogger(scorers=[reply_scorer()], sinks=[memory]).register()
    try:
        for round_ in range(20):
            memory.records.clear()
            for i in range(20):
                litellm.completion(**call_kwargs(server, f"sync {round_}-{i}"))

            async def calls(round_: int = round_) -> None:
                await asyncio.gather(
                    *(litellm.acompletion(**call_kwargs(server, f"async {round_}-{i}")) for i in range(20))
                )

            asyncio.run(calls())
            assert logger.flush(30)
            inputs = sorted(asked(record) for record in memory.records)
            expected = sorted(f"{kind} {round_}-{i}" for kind in ("sync", "async") for i in range(20))
            assert inputs == expected, f"round {round_}: {len(inputs)} of 40 scored"
            assert all(record.score == 1.0 for record in memory.records)
    finally:
        logger.unregister()
        logger.shutdown(10)
    assert logger.lost == 0
    assert logger.engine.stats().submitted == 800  # no call scored twice when a late callback comes


def test_a_call_whose_report_never_comes_is_scored_once_from_its_response(server: FakeJudgeServer) -> None:
    """``asyncio.run(acompletion(...))`` ends the loop before LiteLLM's report task runs: the call is
    scored from the response kept when it returned, and the report LiteLLM carries over to a later
    loop (run there by its logging worker's flush) is left out, not scored twice."""
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    memory = MemorySink()
    logger = ScoringLogger(scorers=[reply_scorer()], sinks=[memory]).register()
    try:
        asyncio.run(litellm.acompletion(**call_kwargs(server, "only call")))
        assert logger.flush(30)
        assert logger.rescued == 1
        asyncio.run(GLOBAL_LOGGING_WORKER.flush())
        assert logger.flush(30)
    finally:
        logger.unregister()
        logger.shutdown(10)
    (record,) = memory.records
    assert asked(record) == "only call" and record.score == 1.0
    assert record.entity == "gpt-4o-mini" and record.run_duration_ms is not None
    assert logger.engine.stats().submitted == 1 and logger.lost == 0


def test_flush_right_after_a_sync_call_scores_it(server: FakeJudgeServer) -> None:
    memory = MemorySink()
    logger = ScoringLogger(scorers=[reply_scorer()], sinks=[memory]).register()
    try:
        for i in range(10):
            litellm.completion(**call_kwargs(server, f"call {i}"))
            assert logger.flush(30)
            assert len(memory.records) == i + 1, f"call {i} was not scored at flush()"
    finally:
        logger.unregister()
        logger.shutdown(10)


def test_an_unregistered_logger_waits_for_no_call(server: FakeJudgeServer) -> None:
    """LiteLLM copies a logger into its list of pre-call hooks too: once unregistered, it notes no call
    (its flush would otherwise wait for a report it never gets, and count the call as lost)."""
    first = ScoringLogger(scorers=[reply_scorer()], sinks=[MemorySink()]).register()
    litellm.completion(**call_kwargs(server, "before"))
    assert first.flush(30)
    first.unregister()
    memory = MemorySink()
    second = ScoringLogger(scorers=[reply_scorer()], sinks=[memory]).register()
    try:
        litellm.completion(**call_kwargs(server, "after"))
        assert second.flush(30) and first.flush(30)
    finally:
        second.unregister()
        first.shutdown(10)
        second.shutdown(10)
    assert [asked(record) for record in memory.records] == ["after"]
    assert first.lost == 0 and second.lost == 0
