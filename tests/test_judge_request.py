"""What a judge call sends: the step's schema is built once per class, and the request is the one LiteLLM
would send for the class (through the real LiteLLM path to the fake server on 127.0.0.1)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from agentevals import Judge
from agentevals.testing import FakeJudgeServer, Reply

VALID = {"verdict": "yes", "reason": "fine"}


class Verdict(BaseModel):
    verdict: str
    reason: str


async def test_a_schema_class_goes_out_as_litellm_sends_it(judge_server: FakeJudgeServer) -> None:
    import litellm

    judge_server.push(VALID, VALID, VALID)
    await litellm.acompletion(
        model="openai/gpt-4o-mini",
        api_base=judge_server.url,
        api_key="k",
        messages=[{"role": "user", "content": "p"}],
        response_format=Verdict,
    )
    judge = Judge(model="openai/gpt-4o-mini", api_base=judge_server.url, api_key="k")
    await judge.complete("p", schema=Verdict)
    await judge.complete("p", schema=Verdict)
    by_litellm, first, second = (request.body for request in judge_server.requests)
    assert first["response_format"] == by_litellm["response_format"]
    assert second["response_format"] == by_litellm["response_format"]
    assert by_litellm["response_format"]["json_schema"]["name"] == "Verdict"
    stated = first["messages"][-1]["content"].rsplit("\n", 1)[-1]
    assert json.loads(stated) == Verdict.model_json_schema()  # the prompt states the schema too


async def test_the_schema_is_built_once_per_class_not_per_call(judge_server: FakeJudgeServer) -> None:
    built = 0

    class Counted(BaseModel):
        verdict: str
        reason: str

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            nonlocal built
            built += 1
            return super().model_json_schema(*args, **kwargs)

    judge = judge_server.judge()
    judge_server.push(VALID)
    await judge.complete("p", schema=Counted)
    after_one = built
    judge_server.push(*[VALID] * 5)
    for _ in range(5):
        reply = await judge.complete("p", schema=Counted)
        assert reply.value == Counted(**VALID)
    assert after_one >= 1
    assert built == after_one  # pydantic used to build it 3 times a call (prompt + LiteLLM twice)
    assert all(r.body["response_format"]["json_schema"]["name"] == "Counted" for r in judge_server.requests)


async def test_the_reported_cost_is_litellms_price_for_the_usage(judge_server: FakeJudgeServer) -> None:
    import litellm

    judge_server.push(Reply(content=json.dumps(VALID), prompt_tokens=1000, completion_tokens=200))
    judge = Judge(model="openai/gpt-4o-mini", api_base=judge_server.url, api_key="k")
    reply = await judge.complete("p", schema=Verdict)
    prompt_cost, completion_cost = litellm.cost_per_token(
        model="gpt-4o-mini", prompt_tokens=1000, completion_tokens=200
    )
    assert reply.call.cost_usd is not None and reply.call.cost_usd > 0
    assert abs(reply.call.cost_usd - (prompt_cost + completion_cost)) < 1e-12
    assert (reply.call.prompt_tokens, reply.call.completion_tokens) == (1000, 200)
