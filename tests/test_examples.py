"""Every script in examples/ runs (in-process, offline) and prints what it promises."""

from __future__ import annotations

import runpy
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(name: str) -> None:
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")


def test_agent_middleware(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "scores.db"
    monkeypatch.setenv("AGENTEVALS_DB", str(db))
    run_example("agent_middleware.py")
    out = capsys.readouterr().out
    assert "It is sunny, 21°C." in out and "It is light snow, -3°C." in out
    with sqlite3.connect(db) as conn:
        scores = conn.execute("SELECT scorer_id, score FROM agentevals_scores").fetchall()
    assert [s for s in scores if s[0] == "mentions_weather"] == [("mentions_weather", 1.0)] * 2


def test_chain_callbacks(capsys: pytest.CaptureFixture[str]) -> None:
    run_example("chain_callbacks.py")
    assert capsys.readouterr().out.splitlines() == ["Paris is the capital of France.", "grounded 1.0"]


def test_decorator(capsys: pytest.CaptureFixture[str]) -> None:
    run_example("decorator.py")
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["You asked about Paris; here is a short answer.", "Hello!"]
    assert sorted(lines[2:]) == ["echoes_question 1.0", "short 0.0", "short 1.0"]


@pytest.fixture
def clean_litellm() -> Iterator[None]:
    import litellm

    before = {
        n: list(getattr(litellm, n)) for n in ("callbacks", "success_callback", "_async_success_callback")
    }
    yield
    for name, value in before.items():
        setattr(litellm, name, value)


def test_litellm_logger(clean_litellm: None, capsys: pytest.CaptureFixture[str]) -> None:
    run_example("litellm_logger.py")
    lines = capsys.readouterr().out.splitlines()
    assert sorted(lines) == ["polite 0.0 Sunny.", "polite 1.0 Thank you for asking! It is sunny."]


def test_postgres_sink(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], postgres: Any
) -> None:
    import psycopg

    url = postgres.conninfo
    table = f"agentevals_example_{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("AGENTEVALS_POSTGRES_URL", url)
    monkeypatch.setenv("AGENTEVALS_POSTGRES_TABLE", table)
    try:
        run_example("postgres_sink.py")
        assert "scored=4 sink_errors=0 dead_lettered=0" in capsys.readouterr().out
        with psycopg.connect(url) as conn:
            rows = conn.execute(f"SELECT scorer_id, score FROM {table} ORDER BY scorer_id, score").fetchall()
        assert rows == [
            ("exact_match", 0.0),
            ("exact_match", 1.0),
            ("levenshtein", 0.4),
            ("levenshtein", 1.0),
        ]
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
