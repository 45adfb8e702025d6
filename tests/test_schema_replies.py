"""schema_responder: plausible, schema-valid judge replies for any prompt (used by the offline demo)."""

from __future__ import annotations

import json
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from agentevals._scoring._judge._request import build_messages
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


# -- reasons agree with the verdicts and scores they explain ------------------------------------------

RISING = ("meets the criterion", "most of the judged parts are")
"""What a reason says about a score high on its scale (in the direction the scale measures)."""
FALLING = ("falls short", "few or none")
MIXED = ("some judged parts", "some of the judged parts are")
CONTEXT = ["Paris is the capital of France.", "The Seine flows through Paris."]
SCORERS: dict[str, tuple[dict[str, object], dict[str, object]]] = {
    # scorer name: (factory options, run fields)
    "answer_relevancy": ({}, {}),
    "faithfulness": ({"context": CONTEXT}, {}),
    "hallucination": ({"context": CONTEXT}, {}),  # higher means more hallucinated
    "toxicity": ({}, {}),  # higher means more toxic
    "bias": ({}, {}),
    "context_recall": (
        {"context": CONTEXT},
        {"ground_truth": "Paris is the capital. The Seine flows there."},
    ),
    "context_precision": ({"context": CONTEXT}, {"ground_truth": "Paris"}),
    "context_relevance": ({"context": CONTEXT}, {}),
    "summarization": ({}, {}),
    "noise_sensitivity": ({"baseline_response": "Paris.", "noisy_query": "Capital of France? cats"}, {}),
    "prompt_alignment": ({"evaluation_mode": "user"}, {}),
    "answer_similarity": ({}, {"ground_truth": "Paris is the capital of France."}),
}


def direction_words(share: float) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(one of these must appear, none of these may) for a score at ``share`` of its scale."""
    if share >= 0.7:
        return RISING, FALLING + MIXED
    if share <= 0.4:
        return FALLING, RISING + MIXED
    return MIXED, RISING + FALLING


@pytest.mark.parametrize(
    ("score", "scale"), [(0.0, 1.0), (0.2, 1.0), (0.5, 1.0), (0.9, 1.0), (1.0, 1.0), (8, 10)]
)
@pytest.mark.parametrize("measures", ["", "; higher means more toxic", "; higher is more robust"])
def test_a_reason_step_explains_its_score_in_the_score_s_direction(
    score: float, scale: float, measures: str
) -> None:
    prompt = (
        f"Explain in two or three sentences why the score is {score} (out of\n{scale}{measures}). "
        f'Start with "The score is {score} because".'
    )
    reason = schema_responder()(request_for(prompt, None)).content or ""
    assert reason.startswith(f"The score is {score} because ")
    wanted, unwanted = direction_words(score / scale)
    assert any(w in reason for w in wanted) and not any(w in reason for w in unwanted), reason
    if measures:
        assert measures.rsplit(" ", 1)[-1] in reason  # it speaks of what the scale measures


@pytest.mark.parametrize("positive_rate", [0.0, 0.75, 1.0])
@pytest.mark.parametrize("name", sorted(SCORERS))
def test_every_llm_scorer_s_reason_agrees_with_its_score(name: str, positive_rate: float) -> None:
    import agentevals.scorers.llm as llm

    options, fields = SCORERS[name]
    with FakeJudgeServer(responder=schema_responder(positive_rate=positive_rate)) as server:
        scorer = getattr(llm, f"create_{name}_scorer")(server.judge(), **options)
        result = scorer.run_sync(
            input="Capital of France?", output="Paris is the capital. It is big.", **fields
        )
    assert result.outcome == "scored", result
    wanted, unwanted = direction_words(result.score)
    assert any(w in result.reason for w in wanted), (result.score, result.reason)
    assert not any(w in result.reason for w in unwanted), (result.score, result.reason)


def test_a_low_score_is_never_praised_and_a_high_one_never_blamed() -> None:
    with FakeJudgeServer(responder=schema_responder(positive_rate=0.0)) as server:
        low = create_answer_relevancy_scorer(server.judge()).run_sync(input="Capital?", output="Paris. Big.")
    with FakeJudgeServer(responder=schema_responder(positive_rate=1.0)) as server:
        high = create_answer_relevancy_scorer(server.judge()).run_sync(input="Capital?", output="Paris. Big.")
    assert low.score <= 0.4 and "falls short" in low.reason
    assert high.score == 1.0 and "meets the criterion" in high.reason


class Check(BaseModel):
    claim: str
    supported: bool
    was_in_order: bool
    reason: str


class Checks(BaseModel):
    checks: list[Check]
    relevance: Literal["high", "low"]
    overall_score: float = Field(ge=0.0, le=1.0)
    overall_assessment: str


def walk(value: object) -> list[dict[str, object]]:
    """Every JSON object inside ``value``, outermost first."""
    if isinstance(value, dict):
        return [value, *(o for v in value.values() for o in walk(v))]
    if isinstance(value, list):
        return [o for v in value for o in walk(v)]
    return []


@pytest.mark.parametrize("positive_rate", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("seed", range(6))
def test_reason_fields_restate_the_verdicts_beside_them(positive_rate: float, seed: int) -> None:
    prompt = f"Check each claim (run {seed}):\n1. Paris is in France.\n2. Cats bark.\n3. Water is wet.\n"
    reply = schema_responder(positive_rate=positive_rate)(request_for(prompt, Checks))
    value = Checks.model_validate_json(reply.content or "")
    for check in value.checks:
        reason = check.reason.lower()
        assert ("it is supported" in reason) == check.supported, check
        assert ("it is not supported" in reason) == (not check.supported), check
        assert ("it was not in order" in reason) == (not check.was_in_order), check
        passed = (check.supported + check.was_in_order) / 2
        wanted, unwanted = (
            ("bears this out", "falls short") if passed == 1 else ("falls short", "bears this out")
        )
        if passed == 0.5:
            wanted, unwanted = "a mixed picture", "bears this out"
        assert wanted in check.reason and unwanted not in check.reason, check
    overall = value.overall_assessment.lower()
    assert f'the relevance is "{value.relevance}"' in overall
    assert f"the overall score is {value.overall_score}" in overall


@pytest.mark.parametrize("schema_name", ["FaithfulnessVerdicts", "ToxicityVerdicts", "RelevancyVerdicts"])
def test_per_item_verdict_reasons_name_their_verdict(schema_name: str) -> None:
    import agentevals.scorers.llm._answer_relevancy as relevancy
    import agentevals.scorers.llm._faithfulness as faithfulness
    import agentevals.scorers.llm._toxicity as toxicity

    modules = {
        "FaithfulnessVerdicts": faithfulness,
        "ToxicityVerdicts": toxicity,
        "RelevancyVerdicts": relevancy,
    }
    schema = getattr(modules[schema_name], schema_name)
    for rate in (0.0, 0.5, 1.0):
        prompt = "Judge each:\n1. Paris is in France.\n2. Cats bark.\n3. Water is wet.\n4. It is big.\n"
        value = json.loads(schema_responder(positive_rate=rate)(request_for(prompt, schema)).content or "")
        entries = [o for o in walk(value) if "reason" in o]
        assert len(entries) == 4
        for entry in entries:
            verdict = entry.get("verdict", entry.get("result"))
            assert f'is "{verdict}"' in str(entry["reason"]), entry
