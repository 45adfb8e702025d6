"""Judge configuration checked up front, permanent errors not retried, retries logged as summaries and
error texts without LiteLLM's repeated prefixes."""

from __future__ import annotations

import logging

import pytest
from pydantic import BaseModel

from agentevals import Judge
from agentevals._scoring._judge import _judge, _litellm
from agentevals._scoring._judge._retries import RetryLog
from agentevals.errors import JudgeError
from agentevals.testing import FakeJudgeServer, Reply


class Verdict(BaseModel):
    verdict: str


VALID = {"verdict": "yes"}


def test_check_names_the_missing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match=r"OPENAI_API_KEY in the environment \(or pass Judge\(api_key="):
        Judge(model="openai/gpt-4o-mini").check()
    Judge(model="openai/gpt-4o-mini", api_key="sk-test").check()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    Judge(model="openai/gpt-4o-mini").check()


def test_check_rejects_a_model_litellm_cannot_route() -> None:
    with pytest.raises(ValueError, match=r"'gpt4-nonsense' is not one LiteLLM can route .*'provider/model'"):
        Judge(model="gpt4-nonsense", api_key="k").check()


def test_litellm_prefixes_are_not_repeated_in_error_texts() -> None:
    class InternalServerError(Exception):
        pass

    raw = InternalServerError("litellm.InternalServerError: InternalServerError: OpenAIException - boom")
    assert _litellm.describe_error(raw) == "InternalServerError: boom"
    assert _litellm.describe_error(ValueError("plain text")) == "ValueError: plain text"


async def test_an_unknown_model_is_not_retried(judge_server: FakeJudgeServer) -> None:
    judge_server.push(Reply.error(404, "The model `nope` does not exist"), VALID)
    with pytest.raises(JudgeError) as info:
        await judge_server.judge().complete("p", schema=Verdict)
    assert info.value.attempts == 1 and len(judge_server.requests) == 1
    assert "litellm.NotFoundError: NotFoundError" not in str(info.value)


async def test_retries_warn_once_as_a_summary_and_each_attempt_logs_at_debug(
    judge_server: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_judge, "RETRIES", RetryLog(interval=3600))
    judge_server.push(Reply.error(500, "down"), Reply.error(500, "down"), VALID)
    judge_server.push(Reply.rate_limited(), VALID)
    judge = judge_server.judge()
    with caplog.at_level(logging.DEBUG, logger="agentevals.judge"):
        await judge.complete("p", schema=Verdict)
        await judge.complete("p", schema=Verdict)
    warnings = [r for r in caplog.records if r.name == "agentevals.judge" and r.levelno == logging.WARNING]
    debug = [r for r in caplog.records if r.name == "agentevals.judge" and r.levelno == logging.DEBUG]
    assert (
        len(warnings) == 1 and "1 failed attempt(s) retried (InternalServerError ×1)" in warnings[0].message
    )
    assert len(debug) == 3  # 500, 500, 429
    assert all(
        "litellm.InternalServerError: InternalServerError" not in r.getMessage() for r in caplog.records
    )


def test_a_summary_counts_what_happened_since_the_last_report(caplog: pytest.LogCaptureFixture) -> None:
    retries = RetryLog(interval=0.0)
    with caplog.at_level(logging.WARNING, logger="agentevals.judge"):
        retries.note("m", 1, 4, "RateLimitError", "RateLimitError: slow down")
    assert "1 failed attempt(s) retried (RateLimitError ×1)" in caplog.records[-1].getMessage()
    quiet = RetryLog(interval=3600)
    with caplog.at_level(logging.WARNING, logger="agentevals.judge"):
        quiet.note("m", 1, 4, "RateLimitError", "x")
        quiet.note("m", 2, 4, "RateLimitError", "x")
        quiet.note("m", 1, 4, "Timeout", "x")
    assert sum("retried" in r.getMessage() for r in caplog.records) == 2  # the first summary of each log
