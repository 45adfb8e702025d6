from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentevals.testing import FakeJudgeServer


@pytest.fixture
def judge_server() -> Iterator[FakeJudgeServer]:
    """A fake OpenAI-compatible judge on 127.0.0.1 with an empty script (push replies in the test)."""
    with FakeJudgeServer() as server:
        yield server


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """Keep --doctest-modules from importing conftest files as modules (their fixtures still load):
    several share the basename ``conftest`` and would clash."""
    return True if collection_path.name == "conftest.py" else None
