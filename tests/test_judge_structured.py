"""Structured output modes and the reply cap, through the real LiteLLM path to the fake server on
127.0.0.1 (OpenAI-compatible, and Ollama's own API for ``ollama_chat/`` and ``ollama/`` models)."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from agentevals import Judge
from agentevals._scoring._judge._structured import (
    GRAMMAR_STRING_LIMIT,
    MODES,
    Mode,
    auto_mode,
    mode_arguments,
)
from agentevals.errors import JudgeError, JudgeOutputError
from agentevals.testing import FakeJudgeServer, Reply

VALID = {"verdict": "yes", "reason": "fine"}
PROSE = "The response is not toxic."


class Verdict(BaseModel):
    verdict: str
    reason: str


#: ``Verdict``'s schema as the modes that make a grammar of it send it: its strings bounded.
GRAMMAR_VERDICT = {
    "properties": {
        "verdict": {"title": "Verdict", "type": "string", "maxLength": GRAMMAR_STRING_LIMIT},
        "reason": {"title": "Reason", "type": "string", "maxLength": GRAMMAR_STRING_LIMIT},
    },
    "required": ["verdict", "reason"],
    "title": "Verdict",
    "type": "object",
}


def _schema_stated(body: dict[str, Any]) -> dict[str, Any]:
    content = body["messages"][-1]["content"] if "messages" in body else body["prompt"]
    stated: dict[str, Any] = json.loads(content.strip().rsplit("\n", 1)[-1])
    return stated


@pytest.mark.parametrize(
    ("mode", "response_format"),
    [
        ("json_object_schema", {"type": "json_object", "schema": GRAMMAR_VERDICT}),
        ("json_object", {"type": "json_object"}),
        ("prompt", None),
    ],
)
async def test_each_openai_compatible_mode_sends_its_response_format_and_the_cap(
    judge_server: FakeJudgeServer, mode: str, response_format: dict[str, Any] | None
) -> None:
    judge_server.push(VALID)
    judge = judge_server.judge(model="openai/smollm2", structured_output=mode)
    reply = await judge.complete("Judge this.", schema=Verdict)
    body = judge_server.requests[0].body
    assert reply.value == Verdict(**VALID)
    assert body.get("response_format") == response_format
    assert body["max_tokens"] == 2048 and "format" not in body
    assert _schema_stated(body) == Verdict.model_json_schema()  # every mode states the schema


class Graded(BaseModel):
    label: Literal["pass", "fail"]
    note: str = Field(max_length=20)
    score: float = Field(ge=0, le=1)
    weight: float = Field(ge=0)
    steps: list[str]


@pytest.mark.parametrize("mode", ["json_object_schema", "ollama"])
def test_grammar_modes_bound_free_strings_and_bounded_numbers(mode: Mode) -> None:
    arguments = mode_arguments(mode, Graded)
    sent = arguments["response_format"]["schema"] if mode == "json_object_schema" else arguments["format"]
    fields = sent["properties"]
    assert fields["steps"]["items"] == {"type": "string", "maxLength": GRAMMAR_STRING_LIMIT}
    assert "maxLength" not in fields["label"] and fields["note"]["maxLength"] == 20  # their own bounds
    assert fields["score"]["enum"] == [0, *(i / 100 for i in range(1, 100)), 1]  # two decimals in [0, 1]
    assert "enum" not in fields["weight"]  # no maximum: any number


def test_the_json_schema_mode_sends_the_schema_unchanged() -> None:
    sent = mode_arguments("json_schema", Graded)["response_format"]
    assert sent is Graded  # the LiteLLM shell sends what LiteLLM makes of the class


async def test_json_schema_mode_sends_what_litellm_makes_of_the_class(judge_server: FakeJudgeServer) -> None:
    judge_server.push(VALID)
    await judge_server.judge(model="openai/smollm2", structured_output="json_schema").complete(
        "p", schema=Verdict
    )
    body = judge_server.requests[0].body
    response_format = body["response_format"]
    assert body["max_tokens"] == 2048 and response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Verdict"
    assert response_format["json_schema"]["schema"]["required"] == ["verdict", "reason"]


@pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning")  # LiteLLM's Ollama types, on import
@pytest.mark.parametrize("model", ["ollama_chat/qwen3", "ollama/qwen3"])
async def test_ollama_mode_sends_the_schema_as_ollamas_format(
    judge_server: FakeJudgeServer, model: str
) -> None:
    judge_server.push(VALID)
    judge = judge_server.judge(model=model, api_base=judge_server.url.removesuffix("/v1"))
    assert judge.output_mode() == "ollama"
    reply = await judge.complete("Judge this.", schema=Verdict)
    body = judge_server.requests[0].body
    assert reply.value == Verdict(**VALID)
    assert body["format"] == GRAMMAR_VERDICT
    assert body["options"]["num_predict"] == 2048  # LiteLLM's name for max_tokens at Ollama
    assert _schema_stated(body) == Verdict.model_json_schema()


async def test_auto_keeps_json_schema_for_a_model_litellm_knows(judge_server: FakeJudgeServer) -> None:
    judge_server.push(VALID)
    judge = Judge(model="openai/gpt-4o-mini", api_base=judge_server.url, api_key="k")
    assert judge.output_mode() == "json_schema"
    await judge.complete("p", schema=Verdict)
    assert judge_server.requests[0].body["response_format"]["type"] == "json_schema"


async def test_auto_picks_json_object_with_schema_for_an_unknown_model_at_a_local_server(
    judge_server: FakeJudgeServer,
) -> None:
    judge_server.push(VALID)
    judge = Judge(model="openai/smollm2", api_base=judge_server.url, api_key="k")
    assert judge.output_mode() == "json_object_schema"
    await judge.complete("p", schema=Verdict)
    body = judge_server.requests[0].body
    assert body["response_format"] == {"type": "json_object", "schema": GRAMMAR_VERDICT}


async def test_auto_picks_json_schema_for_vllm(judge_server: FakeJudgeServer) -> None:
    judge_server.push(VALID)
    judge = judge_server.judge(model="hosted_vllm/qwen")
    assert judge.output_mode() == "json_schema"
    await judge.complete("p", schema=Verdict)
    assert judge_server.requests[0].body["response_format"]["json_schema"]["name"] == "Verdict"


@pytest.mark.parametrize(
    ("model", "api_base", "mode"),
    [
        ("openai/gpt-4o-mini", None, "json_schema"),
        ("openai/gpt-4o-mini", "http://127.0.0.1:4000/v1", "json_schema"),
        ("openai/smollm2", "http://127.0.0.1:8080/v1", "json_object_schema"),
        ("openai/smollm2", "http://judge.internal:8000/v1", "json_object_schema"),
        ("openai/new-model", None, "json_object"),
        ("openai/new-model", "https://api.openai.com/v1", "json_object"),
        ("hosted_vllm/qwen", "http://10.0.0.5:8000/v1", "json_schema"),
        ("lm_studio/qwen", None, "json_schema"),
        ("llamafile/mistral", None, "json_object_schema"),
        ("ollama/qwen3", None, "ollama"),
        ("ollama_chat/qwen3", "http://10.0.0.5:11434", "ollama"),
        ("anthropic/claude-3-5-haiku-latest", None, "prompt"),
    ],
)
def test_auto_mode_by_provider_and_server(model: str, api_base: str | None, mode: str) -> None:
    assert Judge(model=model, api_base=api_base).output_mode() == mode
    litellm_knows = {"openai/gpt-4o-mini"}.__contains__
    assert auto_mode(model, api_base, litellm_knows) == mode


@pytest.mark.parametrize(
    ("mode", "chosen", "advice"),
    [
        ("json_schema", "", "try structured_output='json_object_schema'"),
        ("json_object_schema", " (chosen by 'auto')", "try structured_output='json_schema'"),
        ("json_object", "", "try structured_output='json_object_schema'"),
        ("prompt", "", "try structured_output='json_schema'"),
    ],
)
async def test_prose_replies_fail_naming_the_mode_and_the_one_to_try(
    judge_server: FakeJudgeServer, mode: str, chosen: str, advice: str
) -> None:
    judge_server.push(PROSE, PROSE)
    model = "openai/smollm2"
    structured_output = "auto" if chosen else mode
    judge = judge_server.judge(model=model, structured_output=structured_output, max_attempts=2)
    with pytest.raises(JudgeOutputError) as info:
        await judge.complete("p", schema=Verdict)
    message = str(info.value)
    assert f"the replies did not parse under structured_output={mode!r}{chosen}; {advice}" in message
    assert info.value.attempts == 2 and info.value.raw_output == PROSE


async def test_prose_under_ollama_mode_names_the_mode_to_try(judge_server: FakeJudgeServer) -> None:
    judge_server.push(PROSE)
    judge = judge_server.judge(model="ollama_chat/qwen3", api_base=judge_server.url, max_attempts=1)
    with pytest.raises(JudgeOutputError, match=r"structured_output='ollama' \(chosen by 'auto'\); try "):
        await judge.complete("p", schema=Verdict)


async def test_a_server_refusing_the_mode_fails_at_once_naming_the_one_to_try(
    judge_server: FakeJudgeServer,
) -> None:
    judge_server.push(Reply.error(400, "'response_format.type' must be 'json_schema' or 'text'"))
    with pytest.raises(JudgeError) as info:
        await judge_server.judge(model="openai/qwen").complete("p", schema=Verdict)
    assert info.value.attempts == 1
    assert (
        "(if the server refuses structured_output='json_object_schema' (chosen by 'auto'), "
        "try structured_output='json_schema'"
    ) in str(info.value)
    judge_server.push(Reply.error(400, "context too long"))
    with pytest.raises(JudgeError) as info:
        await judge_server.judge(model="openai/qwen", structured_output="prompt").complete(
            "p", schema=Verdict
        )
    assert "structured_output" not in str(info.value)  # nothing was asked for


async def test_a_reply_cut_off_at_the_cap_fails_at_once_saying_so(judge_server: FakeJudgeServer) -> None:
    judge_server.push(
        Reply(content='{"verdict": "yes", "reason": "it goes on and', finish_reason="length"), VALID
    )
    judge = judge_server.judge(model="openai/smollm2", max_tokens=64)
    with pytest.raises(JudgeOutputError) as info:
        await judge.complete("p", schema=Verdict)
    message = str(info.value)
    assert "stopped at the cap of 64 tokens (finish_reason 'length')" in message
    assert "raise Judge(max_tokens=...)" in message and "try structured_output" not in message
    assert info.value.attempts == 1  # the same cap would cut the next reply too
    assert judge_server.requests[0].body["max_tokens"] == 64


async def test_a_complete_object_before_the_cap_still_counts(judge_server: FakeJudgeServer) -> None:
    # Under a JSON grammar, a small model may pad the object with whitespace until the cap.
    judge_server.push(Reply(content=json.dumps(VALID) + "\n" * 50, finish_reason="length"))
    reply = await judge_server.judge(model="openai/smollm2").complete("p", schema=Verdict)
    assert reply.value == Verdict(**VALID)


async def test_fenced_json_and_prose_around_one_object_parse(judge_server: FakeJudgeServer) -> None:
    judge_server.push(
        f"Here is my verdict:\n```json\n{json.dumps(VALID)}\n```",
        f"Sure. {json.dumps(VALID)} Hope this helps!",
    )
    judge = judge_server.judge(model="openai/smollm2", structured_output="prompt")
    assert (await judge.complete("p", schema=Verdict)).value == Verdict(**VALID)
    assert (await judge.complete("p", schema=Verdict)).value == Verdict(**VALID)


@pytest.mark.parametrize(
    ("settings", "sent"),
    [
        ({"max_tokens": None}, {}),
        ({"max_tokens": 300}, {"max_tokens": 300}),
        ({"completion_kwargs": {"max_tokens": 99}}, {"max_tokens": 99}),
        (
            {"max_tokens": 300, "completion_kwargs": {"max_completion_tokens": 77}},
            {"max_completion_tokens": 77},
        ),
    ],
)
async def test_the_cap_is_ours_unless_the_completion_kwargs_set_one(
    judge_server: FakeJudgeServer, settings: dict[str, Any], sent: dict[str, int]
) -> None:
    judge_server.push(VALID)
    await judge_server.judge(model="openai/smollm2", **settings).complete("p", schema=Verdict)
    body = judge_server.requests[0].body
    assert {k: body[k] for k in ("max_tokens", "max_completion_tokens") if k in body} == sent


async def test_auto_caps_a_text_reply_lower_than_a_json_one(judge_server: FakeJudgeServer) -> None:
    judge_server.push(VALID, "The score is 1.0 because the answer is right.")
    judge = judge_server.judge(model="openai/smollm2")
    await judge.complete("p", schema=Verdict)
    await judge.complete("Explain the score.")
    assert [r.body["max_tokens"] for r in judge_server.requests] == [2048, 512]


async def test_auto_cap_leaves_reasoning_models_uncapped(judge_server: FakeJudgeServer) -> None:
    judge_server.push(VALID)
    await judge_server.judge(model="openai/o3-mini", temperature=None).complete("p", schema=Verdict)
    body = judge_server.requests[0].body
    assert "max_tokens" not in body and "max_completion_tokens" not in body


def test_invalid_mode_or_cap_is_rejected_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="'auto', 'json_schema', 'json_object_schema'"):
        Judge(model="openai/x", structured_output="json")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_tokens"):
        Judge(model="openai/x", max_tokens=0)
    with pytest.raises(ValueError, match="max_tokens"):
        Judge(model="openai/x", max_tokens=True)
    assert MODES[0] == "auto"
