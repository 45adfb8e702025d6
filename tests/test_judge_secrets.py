"""A judge's credentials never show: not in its repr, errors, records, sinks, the dead-letter file or logs.

Every judge call goes through the real LiteLLM HTTP path to the fake server on 127.0.0.1, which
records the headers it received: the key must still reach it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, SecretStr

from agentevals import Judge, JudgeError, PromptStep, Run, ScoreRecord, ScoringEngine, create_scorer
from agentevals._scoring._judge._request import build_request
from agentevals._scoring._judge._secrets import (
    MASK,
    conceal,
    is_secret_name,
    mask_text,
    reveal,
    secret_values,
)
from agentevals.engine import DeliveryOptions
from agentevals.sinks import JsonlSink, LoggingSink, MemorySink, RetryPolicy, SQLiteSink
from agentevals.testing import ChatRequest, FakeJudgeServer, Reply

KEY = "sk-123-secret"
HEADER_KEY = "hdr-456-secret"
SECRETS = (KEY, HEADER_KEY, "sk-123", "456-secret")  # also no recognizable piece of either
HEADERS = {"X-Api-Key": HEADER_KEY, "X-Team": "evals"}

#: Loggers that may log a judge request or a provider's error, caught at DEBUG.
LOGGERS = ("", "LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "openai", "httpx", "httpcore", "agentevals")


def assert_no_secret(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} shown in {where}: {text[:2000]}"


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    yield caplog


def captured(caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]) -> str:
    """Every log line, formatted with its traceback, plus what LiteLLM's own handler printed."""
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    lines = [formatter.format(record) for record in caplog.records]
    out, err = capfd.readouterr()
    return "\n".join([*lines, caplog.text, out, err])


def test_repr_and_str_mask_the_key_and_credential_settings() -> None:
    judge = Judge(
        model="m",
        api_key=KEY,
        completion_kwargs={
            "extra_headers": {"Authorization": f"Bearer {KEY}", "api-key": HEADER_KEY, "X-Team": "evals"},
            "aws_secret_access_key": KEY,
            "vertex_credentials": {"private_key": KEY},
            "azure_ad_token": HEADER_KEY,
            "max_tokens": 100,
            "top_p": 0.5,
        },
    )
    for text in (repr(judge), str(judge), f"{judge}", repr(judge.completion_kwargs)):
        assert_no_secret(text, "the Judge repr")
    assert isinstance(judge.api_key, SecretStr) and judge.api_key.get_secret_value() == KEY
    assert judge.completion_kwargs["max_tokens"] == 100  # counts and plain settings stay as given
    assert judge.completion_kwargs["extra_headers"]["X-Team"] == "evals"
    assert "X-Team" in repr(judge) and MASK in repr(judge)
    copy = dataclasses.replace(judge, instructions="Grade strictly.")  # as make_judge does
    assert copy.api_key == judge.api_key and copy.completion_kwargs == judge.completion_kwargs
    assert_no_secret(repr(copy) + repr(dataclasses.asdict(copy)), "a copy of the Judge")
    assert isinstance(Judge.of({"model": "m", "api_key": KEY}).api_key, SecretStr)  # type: ignore[union-attr]


def test_the_request_keeps_secrets_until_litellm_reveals_them() -> None:
    judge = Judge(model="m", api_key=KEY, completion_kwargs={"extra_headers": HEADERS, "api_version": "1"})
    request = build_request(
        model="m",
        instructions="",
        prompt="p",
        schema=None,
        output={},
        max_tokens=None,
        temperature=None,
        timeout=1.0,
        api_base=None,
        api_key=judge.api_key,
        extra=dict(judge.completion_kwargs),
    )
    assert_no_secret(repr(request), "the built request")
    sent = reveal(request)
    assert sent["api_key"] == KEY and sent["extra_headers"] == HEADERS and sent["api_version"] == "1"


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("api_key", True),
        ("x-api-key", True),
        ("api-key", True),
        ("Authorization", True),
        ("Proxy-Authorization", True),
        ("aws_secret_access_key", True),
        ("aws_access_key_id", True),
        ("aws_session_token", True),
        ("vertex_credentials", True),
        ("password", True),
        ("max_tokens", False),
        ("max_completion_tokens", False),
        ("api_base", False),
        ("keywords", False),
        ("monkey", False),
    ],
)
def test_credential_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_a_bearer_token_is_masked_alone_too() -> None:
    secrets = secret_values(conceal({"extra_headers": {"Authorization": f"Bearer {KEY}"}}))
    assert mask_text(f"Incorrect API key provided: {KEY}", secrets) == f"Incorrect API key provided: {MASK}"


PLACEHOLDERS = ["none", "no-key", "EMPTY", "sk-x", "not-needed", "sk-no-key-required"]


@pytest.mark.parametrize("placeholder", PLACEHOLDERS)
def test_a_placeholder_key_of_a_local_server_masks_no_words(placeholder: str) -> None:
    text = f"Input should be 'none', 'minimal' or 'severe'; {', '.join(PLACEHOLDERS)}"
    assert secret_values(SecretStr(placeholder)) == ()
    assert mask_text(text, secret_values(SecretStr(placeholder))) == text


def test_a_short_real_key_is_still_masked_from_eight_characters() -> None:
    secrets = secret_values(SecretStr("s3cr3t-k"))
    assert mask_text("key s3cr3t-k was refused", secrets) == f"key {MASK} was refused"


class Impact(BaseModel):
    level: Literal["none", "minimal", "severe"]


async def test_a_judge_with_a_placeholder_key_reports_the_enum_values_unmasked(
    judge_server: FakeJudgeServer,
) -> None:
    judge_server.push({"level": "huge"})
    judge = judge_server.judge(api_key="none", max_attempts=1)
    with pytest.raises(JudgeError) as info:
        await judge.complete("p", schema=Impact)
    assert "'none', 'minimal' or 'severe'" in str(info.value) and MASK not in str(info.value)


async def test_a_401_that_echoes_the_key_raises_a_masked_judge_error(
    judge_server: FakeJudgeServer,
    debug_logs: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    judge_server.push(Reply.error(401, f"Incorrect API key provided: {KEY} ({HEADER_KEY})"))
    judge = judge_server.judge(api_key=KEY, completion_kwargs={"extra_headers": HEADERS})
    with pytest.raises(JudgeError) as info:
        await judge.complete("p")
    error = info.value
    assert "AuthenticationError" in str(error) and MASK in str(error)  # the echo was there, masked
    assert error.call is not None
    chained = [error.__cause__, getattr(error.__cause__, "__context__", None)]
    for text in (
        str(error),
        repr(error),
        error.call.model_dump_json(),
        *map(repr, chained),
        *map(str, chained),
    ):
        assert_no_secret(text, "the JudgeError")
    assert_no_secret(captured(debug_logs, capfd), "the logs")
    assert judge_server.requests[0].headers["authorization"] == f"Bearer {KEY}"


class Broken:
    """A sink that always fails, so its batches go to the dead-letter file."""

    name = "broken"

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        raise ConnectionError("store unavailable")

    async def close(self) -> None:
        return None


def respond(request: ChatRequest) -> Reply | dict[str, float] | str:
    """Each run's prompt names the way its judge call goes (a retry's too)."""
    prompt = request.step_prompt
    if prompt.startswith("reason"):
        return f"The score is fine; the key was {KEY} and {HEADER_KEY}."  # a reply that echoes them
    if "case=ok" in prompt:
        return {"score": 1.0}
    if "case=401" in prompt:
        return Reply.error(401, f"Incorrect API key provided: {KEY}. Header {HEADER_KEY} rejected.")
    if "case=500" in prompt:
        return Reply.error(500, f"upstream failed for key {KEY}")
    if "case=malformed" in prompt:
        return Reply.malformed(f'{{"score": {KEY}, "header": "{HEADER_KEY}"')
    return Reply.error(400, "unknown case")


CASES = ("ok", "401", "500", "malformed")


def test_records_sinks_dead_letter_and_logs_never_hold_the_key(
    tmp_path: Path, debug_logs: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    memory, jsonl, db, dead_letter = (
        MemorySink(),
        tmp_path / "scores.jsonl",
        tmp_path / "s.db",
        tmp_path / "dl",
    )
    with FakeJudgeServer(responder=respond) as server:
        judge = server.judge(api_key=KEY, max_attempts=2, completion_kwargs={"extra_headers": HEADERS})
        scorer = (
            create_scorer(id="judged", judge=judge)
            .generate_score(
                PromptStep(description="score", create_prompt=lambda run, **_: f"case={run.input}")
            )
            .generate_reason(
                PromptStep(description="why", create_prompt=lambda run, **_: f"reason {run.input}")
            )
        )
        engine = ScoringEngine(
            [scorer],
            sinks=[memory, JsonlSink(jsonl), SQLiteSink(db), LoggingSink(level=logging.INFO), Broken()],
            delivery=DeliveryOptions(
                retry=RetryPolicy(attempts=2, initial=0.001, max_wait=0.005), dead_letter=dead_letter
            ),
        )
        for case in CASES:
            engine.submit(Run(run_id=f"run-{case}", input=case, output="answer"))
        engine.shutdown(timeout=30)  # the records and the dead-letter lines below show it finished
        received = list(server.requests)

    records = {r.run_id: r for r in memory.records}
    assert set(records) == {f"run-{case}" for case in CASES}
    ok = records["run-ok"]
    assert (
        ok.ok
        and ok.score == 1.0
        and [c.step for c in ok.judge_calls] == ["generate_score", "generate_reason"]
    )
    assert ok.reason is not None and MASK in ok.reason  # the judge's echo of the key, masked
    for case in ("401", "500", "malformed"):
        failure = records[f"run-{case}"]
        assert not failure.ok and failure.judge_calls and not failure.judge_calls[-1].ok
        assert MASK in failure.model_dump_json(), case  # the provider echoed the key; it was masked

    for record in memory.records:
        assert_no_secret(record.model_dump_json(), f"the record of {record.run_id}")
        assert_no_secret(repr(record), f"the repr of {record.run_id}")
    assert_no_secret(jsonl.read_text(), "the JSONL sink")
    with sqlite3.connect(db) as conn:
        assert_no_secret("\n".join(conn.iterdump()), "the SQLite sink")
    lines = dead_letter.read_text().splitlines()
    assert len(lines) == len(CASES) and all(json.loads(line) for line in lines)
    assert_no_secret("\n".join(lines), "the dead-letter file")
    assert_no_secret(captured(debug_logs, capfd), "the logs")
    assert any(r.name.startswith("openai") for r in debug_logs.records)  # the SDK's request log was seen

    # The key and the header still reached the server, on every call.
    assert received and all(r.headers["authorization"] == f"Bearer {KEY}" for r in received)
    assert all(r.headers["x-api-key"] == HEADER_KEY for r in received)
    assert all(KEY not in repr(r) for r in received)
