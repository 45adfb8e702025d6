"""LiteLLM's INFO lines are left out of the log while agentevals calls a judge (and in ``agentevals
worker``), unless ``AGENTEVALS_DEBUG=1`` or ``agentevals worker --verbose`` asks for them. Real LiteLLM,
fake judge server on 127.0.0.1."""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

import pytest

from agentevals._scoring._judge._litellm import litellm
from agentevals._scoring._judge._quiet import DEBUG_ENV
from agentevals._worker._cli import add_worker_arguments, keep_litellm_info
from agentevals.testing import FakeJudgeServer

WORKERS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "scale" / "workers.md"


def litellm_info(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name.startswith("LiteLLM") and r.levelno < logging.WARNING
    ]


async def test_a_judge_call_logs_no_litellm_info_line(
    judge_server: FakeJudgeServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DEBUG_ENV, raising=False)
    caplog.set_level(logging.INFO)
    judge_server.push("fine", "fine")
    judge = judge_server.judge()
    await judge.complete("first")
    await judge.complete("second")
    assert len(judge_server.requests) == 2
    assert litellm_info(caplog) == []


async def test_agentevals_debug_keeps_them(
    judge_server: FakeJudgeServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DEBUG_ENV, "1")
    caplog.set_level(logging.INFO)
    judge_server.push("fine")
    await judge_server.judge().complete("first")
    assert any("gpt-4o-mini" in line for line in litellm_info(caplog))


async def test_the_applications_own_litellm_calls_keep_their_lines(
    judge_server: FakeJudgeServer, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DEBUG_ENV, raising=False)
    caplog.set_level(logging.INFO)
    judge_server.push("fine", "fine")
    await judge_server.judge().complete("a judge call first")
    await litellm().acompletion(
        model="openai/gpt-4o-mini",
        api_base=judge_server.url,
        api_key="fake-key",
        messages=[{"role": "user", "content": "the app's own call"}],
    )
    assert any("gpt-4o-mini" in line for line in litellm_info(caplog))


def test_worker_verbose_parses_and_keeps_litellm_info(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEBUG_ENV, raising=False)
    parser = argparse.ArgumentParser()
    add_worker_arguments(parser)
    required = ["--broker", "redis://127.0.0.1:6379/0", "--scorers", "app:SCORERS", "--sink", "s.db"]
    assert parser.parse_args(required).verbose is False
    args = parser.parse_args([*required, "--verbose"])
    keep_litellm_info(args.verbose)
    assert os.environ[DEBUG_ENV] == "1"


def test_worker_verbose_is_documented() -> None:
    worker_section = WORKERS_PAGE.read_text().split("agentevals worker --broker", 1)[1]
    assert "--verbose" in worker_section and DEBUG_ENV in worker_section
