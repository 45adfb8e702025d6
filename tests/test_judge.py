"""Judge behaviour through the real LiteLLM HTTP path against the fake server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time

import pytest
from pydantic import BaseModel

from agentevals import Judge, JudgeError, PromptStep, ScorerError, create_scorer
from agentevals.errors import JudgeOutputError
from agentevals.testing import FakeJudgeServer, Reply


class Verdict(BaseModel):
    verdict: str
    reason: str


VALID = {"verdict": "yes", "reason": "fine"}


async def test_rate_limit_then_success(judge_server: FakeJudgeServer) -> None:
    judge_server.push(Reply.rate_limited(), VALID)
    reply = await judge_server.judge().complete("p", schema=Verdict)
    assert reply.value == Verdict(**VALID)
    assert reply.call.attempts == 2 and reply.call.ok
    assert len(judge_server.requests) == 2


async def test_server_error_twice_then_success(judge_server: FakeJudgeServer) -> None:
    judge_server.push(Reply.server_error(), Reply.server_error(), VALID)
    reply = await judge_server.judge().complete("p", schema=Verdict)
    assert reply.value.verdict == "yes"
    assert reply.call.attempts == 3
    assert len(judge_server.requests) == 3  # our retries only: the SDK's own are switched off


async def test_malformed_json_then_valid(judge_server: FakeJudgeServer) -> None:
    judge_server.push(Reply.malformed(), '{"verdict": "no"}', VALID)  # bad JSON, then schema-invalid
    reply = await judge_server.judge().complete("p", schema=Verdict)
    assert reply.value.reason == "fine"
    assert reply.call.attempts == 3


async def test_a_retry_shows_the_judge_its_invalid_reply_and_what_was_wrong(
    judge_server: FakeJudgeServer,
) -> None:
    judge_server.push('{"verdict": "no"}', '{"verdict": "no", "reason": 3}', VALID)
    reply = await judge_server.judge(instructions="Grade.").complete("Judge this.", schema=Verdict)
    assert reply.value == Verdict(**VALID) and reply.call.attempts == 3
    first, second, third = (request.messages for request in judge_server.requests)
    assert [m["role"] for m in first] == ["system", "user"]
    assert second[:2] == first and [m["role"] for m in second[2:]] == ["assistant", "user"]
    assert second[2]["content"] == '{"verdict": "no"}'
    feedback = "That reply is not valid: 1 error(s), first at reason: Field required."
    assert second[3]["content"].startswith(feedback)
    assert third[:2] == first and len(third) == 4  # only the last invalid reply is shown
    assert third[2]["content"] == '{"verdict": "no", "reason": 3}'
    assert "first at reason: Input should be a valid string" in third[3]["content"]


async def test_a_reply_with_raw_line_breaks_in_its_strings_parses(judge_server: FakeJudgeServer) -> None:
    judge_server.push('{"verdict": "yes", "reason": "first line\nsecond line\tend"}')
    reply = await judge_server.judge().complete("p", schema=Verdict)
    assert reply.value.reason == "first line\nsecond line\tend" and reply.call.attempts == 1


async def test_a_reply_invalid_beyond_its_line_breaks_still_fails(judge_server: FakeJudgeServer) -> None:
    judge_server.push('{"verdict": "yes",\n "reason": "a\nb"', '{"verdict": "yes\n"}')
    with pytest.raises(JudgeOutputError) as info:
        await judge_server.judge(max_attempts=2).complete("p", schema=Verdict)
    assert "first at reason: Field required" in str(info.value)  # read once line breaks are allowed


async def test_timeout_is_retried_then_exhausted(judge_server: FakeJudgeServer) -> None:
    judge_server.push(Reply.slow(1.5, VALID), Reply.slow(1.5, VALID))
    judge = judge_server.judge(timeout=0.3, max_attempts=2)
    started = time.perf_counter()
    with pytest.raises(JudgeError) as info:
        await judge.complete("p", schema=Verdict)
    assert time.perf_counter() - started < 1.5  # each attempt was cut at the timeout
    assert info.value.attempts == 2
    assert "Timeout" in str(info.value)
    assert info.value.call is not None and not info.value.call.ok


async def test_timeout_then_success(judge_server: FakeJudgeServer) -> None:
    judge_server.push(Reply.slow(1.5, VALID), VALID)
    reply = await judge_server.judge(timeout=0.3).complete("p", schema=Verdict)
    assert reply.call.attempts == 2


async def test_exhausted_attempts_raise_scorer_error_with_the_last_cause(
    judge_server: FakeJudgeServer,
) -> None:
    import litellm

    judge_server.push(Reply.server_error(), Reply.server_error(), Reply.rate_limited())
    scorer = (
        create_scorer(id="judged", judge=judge_server.judge(max_attempts=3))
        .analyze(PromptStep(description="d", create_prompt=lambda **_: "p", output_schema=Verdict))
        .generate_score(lambda **_: 1)
    )
    with pytest.raises(ScorerError) as info:
        await scorer.run(output="x")
    error = info.value
    assert error.step == "analyze"
    assert isinstance(error.__cause__, JudgeError) and error.__cause__.attempts == 3
    assert isinstance(error.__cause__.__cause__, litellm.RateLimitError)
    assert error.prompts == {"analyze": "p"}
    assert [c.attempts for c in error.judge_calls] == [3]


async def test_malformed_output_exhausted_is_a_judge_output_error(
    judge_server: FakeJudgeServer,
) -> None:
    judge_server.push(Reply.malformed("nope"), Reply.malformed("still nope"))
    with pytest.raises(JudgeOutputError) as info:
        await judge_server.judge(max_attempts=2).complete("p", schema=Verdict)
    assert info.value.raw_output == "still nope"


async def test_non_retryable_errors_fail_at_once(judge_server: FakeJudgeServer) -> None:
    judge_server.push(Reply.error(401, "bad key"), VALID)
    with pytest.raises(JudgeError) as info:
        await judge_server.judge().complete("p", schema=Verdict)
    assert info.value.attempts == 1
    assert len(judge_server.requests) == 1


async def test_request_shape_usage_and_cost(judge_server: FakeJudgeServer) -> None:
    judge_server.push(
        Reply(content='{"verdict":"yes","reason":"r"}', prompt_tokens=100, completion_tokens=50)
    )
    # A plain Judge at the server: the cost comes from LiteLLM's price list, as for a real provider.
    judge = Judge(
        model="openai/gpt-4o-mini",
        api_base=judge_server.url,
        api_key="k",
        instructions="You are strict.",
        temperature=0.0,
    )
    reply = await judge.complete("Judge this.", schema=Verdict, step="analyze")
    body = judge_server.requests[0].body
    assert body["messages"][0] == {"role": "system", "content": "You are strict."}
    assert body["messages"][1]["content"].startswith("Judge this.")
    assert '"verdict"' in body["messages"][1]["content"]  # the schema is stated in the prompt
    assert body["response_format"]["type"] == "json_schema"
    assert body["temperature"] == 0.0
    assert (reply.call.prompt_tokens, reply.call.completion_tokens) == (100, 50)
    assert reply.call.cost_usd is not None and reply.call.cost_usd > 0
    assert reply.call.step == "analyze" and reply.call.model == "openai/gpt-4o-mini"


async def test_the_fake_judge_records_a_fake_model_at_no_cost(judge_server: FakeJudgeServer) -> None:
    judge_server.push(
        Reply(content='{"verdict":"yes","reason":"r"}', prompt_tokens=100, completion_tokens=50)
    )
    reply = await judge_server.judge().complete("Judge this.", schema=Verdict, step="analyze")
    assert judge_server.requests[0].body["model"] == "gpt-4o-mini"  # the request is a normal one
    assert (reply.call.model, reply.call.cost_usd) == ("fake/gpt-4o-mini", 0.0)
    assert (reply.call.prompt_tokens, reply.call.completion_tokens) == (100, 50)


async def test_text_mode_returns_the_reply_text(judge_server: FakeJudgeServer) -> None:
    judge_server.push("The score is 1 because it is right.")
    reply = await judge_server.judge().complete("why?")
    assert reply.value == "The score is 1 because it is right."
    assert "response_format" not in judge_server.requests[0].body


async def test_concurrency_limit_is_respected() -> None:
    in_flight = 0
    peak = 0

    def responder(_: object) -> Reply:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        time.sleep(0.05)
        in_flight -= 1
        return Reply.json(VALID)

    with FakeJudgeServer(responder=responder) as server:
        judge = server.judge(max_concurrency=2)
        replies = await asyncio.gather(*(judge.complete("p", schema=Verdict) for _ in range(6)))
    assert len(replies) == 6
    assert peak <= 2


def test_invalid_judge_configuration_is_rejected() -> None:
    with pytest.raises(ValueError, match="LiteLLM model string"):
        Judge(model="")
    with pytest.raises(ValueError, match="max_attempts"):
        Judge(model="openai/x", max_attempts=0)
    with pytest.raises(ValueError, match="timeout"):
        Judge(model="openai/x", timeout=0)
    with pytest.raises(TypeError, match="judge must be"):
        create_scorer(id="x", judge=42)  # type: ignore[arg-type]
    judge = Judge.of({"model": "openai/x", "instructions": "Be fair."})
    assert judge is not None and (judge.model, judge.instructions) == ("openai/x", "Be fair.")
    assert Judge.of("openai/y") is not None
