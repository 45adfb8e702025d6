"""schema_responder: plausible, schema-valid judge replies for any prompt (used by the offline demo)."""

from __future__ import annotations

import json
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from agentevals._judge._request import build_messages
from agentevals.scorers.llm import create_answer_relevancy_scorer
from agentevals.testing import ChatRequest, FakeJudgeServer, schema_responder


class Verdict(BaseModel):
    context_index: int
    verdict: Literal["yes", "no"]
    reason: str


class Verdicts(BaseModel):
    verdicts: list[Verdict]
    confidence: float = Field(ge=0.0, le=1.0)
    note: str | None = None


def request_for(prompt: str, schema: type[BaseModel] | None) -> ChatRequest:
    return ChatRequest(body={"model": "m", "messages": build_messages("Judge.", prompt, schema)})


def test_reply_validates_against_the_schema_with_one_entry_per_enumerated_item() -> None:
    prompt = "Judge each piece:\n[0] Paris is in France.\n[1] Cats purr.\n[2] Water is wet.\nReturn verdicts."
    reply = schema_responder()(request_for(prompt, Verdicts))
    value = Verdicts.model_validate_json(reply.content or "")
    assert [v.context_index for v in value.verdicts] == [0, 1, 2]
    assert 0.0 <= value.confidence <= 1.0


def test_the_list_of_the_announced_size_wins() -> None:
    class Match(BaseModel):
        unit: str
        reason: str

    class Matches(BaseModel):
        matches: list[Match]

    prompt = (
        "Reference:\n1. a\n2. b\n\nAnswer:\n1. x\n2. y\n3. z\n\nOne match per reference unit (2 matches)."
    )
    value = Matches.model_validate_json(schema_responder()(request_for(prompt, Matches)).content or "")
    assert [m.unit for m in value.matches] == ["a", "b"]


def test_replies_are_deterministic_per_prompt_and_text_requests_get_a_sentence() -> None:
    respond = schema_responder()
    first = respond(request_for("same prompt", Verdicts)).content
    assert first == respond(request_for("same prompt", Verdicts)).content
    text = respond(request_for("Explain the score.", None)).content or ""
    assert text.endswith(".") and not text.startswith("{")
    with pytest.raises(ValueError, match="positive_rate"):
        schema_responder(positive_rate=2.0)


def test_schema_from_response_format_when_the_prompt_has_none() -> None:
    body = {
        "messages": [{"role": "user", "content": "rate it"}],
        "response_format": {"type": "json_schema", "json_schema": {"schema": Verdict.model_json_schema()}},
    }
    Verdict.model_validate(json.loads(schema_responder()(ChatRequest(body=body)).content or ""))


def test_a_real_llm_scorer_runs_end_to_end_through_the_fake_server() -> None:
    with FakeJudgeServer(responder=schema_responder()) as server:
        scorer = create_answer_relevancy_scorer(server.judge())
        result = scorer.run_sync(input="Capital of France?", output="Paris is the capital. It is big.")
    assert 0.0 <= result.score <= 1.0 and result.reason
    assert len(server.requests) == 3  # statements, verdicts, reason
