"""One fake judge server for all LLM scorer tests (stopping a server costs ~0.5 s), reset per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentevals.testing import FakeJudgeServer


@pytest.fixture(scope="session")
def _shared_judge_server() -> Iterator[FakeJudgeServer]:
    with FakeJudgeServer() as server:
        yield server


@pytest.fixture
def judge_server(_shared_judge_server: FakeJudgeServer) -> Iterator[FakeJudgeServer]:
    """The shared server with an empty script; a test must use every reply it scripts."""
    server = _shared_judge_server
    server.requests.clear()
    server._queue.clear()
    yield server
    left = len(server._queue)
    server._queue.clear()
    assert left == 0, f"{left} scripted judge repl(ies) were never requested"
