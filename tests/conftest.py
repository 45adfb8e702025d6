from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentevals.testing import FakeJudgeServer


@pytest.fixture
def judge_server() -> Iterator[FakeJudgeServer]:
    """A fake OpenAI-compatible judge on 127.0.0.1 with an empty script (push replies in the test)."""
    with FakeJudgeServer() as server:
        yield server
