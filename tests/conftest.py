from __future__ import annotations

import getpass
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentevals.testing import FakeJudgeServer


@pytest.fixture
def judge_server() -> Iterator[FakeJudgeServer]:
    """A fake OpenAI-compatible judge on 127.0.0.1 with an empty script (push replies in the test)."""
    with FakeJudgeServer() as server:
        yield server


@dataclass(frozen=True)
class PostgresServer:
    """The test server (127.0.0.1:5432, database ``test``) as a libpq conninfo and as a URL."""

    user: str

    @property
    def conninfo(self) -> str:
        return f"host=127.0.0.1 port=5432 dbname=test user={self.user} connect_timeout=3"

    @property
    def url(self) -> str:
        return f"postgresql://{self.user}@127.0.0.1:5432/test?connect_timeout=3"


@pytest.fixture(scope="session")
def postgres() -> PostgresServer:
    """A reachable test PostgreSQL (trust auth as ``postgres`` or the current user). Skips with the
    reason when there is none, except under ``CI=true``, where a missing server fails the test."""
    try:
        import psycopg
    except ImportError:
        reason = "psycopg is not installed (uv sync --extra postgres)"
    else:
        errors = []
        for user in dict.fromkeys(["postgres", getpass.getuser()]):
            server = PostgresServer(user)
            try:
                psycopg.connect(server.conninfo).close()
            except psycopg.Error as err:
                errors.append(f"{server.url}: {err}".strip())
                continue
            return server
        reason = "no PostgreSQL reachable on 127.0.0.1:5432 database 'test': " + "; ".join(errors)
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """Keep --doctest-modules from importing conftest files as modules (their fixtures still load):
    several share the basename ``conftest`` and would clash."""
    return True if collection_path.name == "conftest.py" else None
