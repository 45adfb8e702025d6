"""Judge replies the LLM scorers accept and refuse: labels in any case, reasons optional, and an extraction
that finds nothing in a non-empty text asked again, then failing the run instead of scoring a silent 0
or 1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from item_counts import asks_again_for
from pydantic import BaseModel, ValidationError

from agentevals import Judge, Run, Scorer
from agentevals._model._result import ScoreFailure
from agentevals._scoring._score_once import FailureLog, score_once
from agentevals.scorers.llm import (
    create_answer_relevancy_scorer,
    create_context_recall_scorer,
    create_faithfulness_scorer,
    create_hallucination_scorer,
    create_summarization_scorer,
    create_toxicity_scorer,
)
from agentevals.scorers.llm._answer_relevancy import RelevancyVerdict
from agentevals.scorers.llm._answer_similarity import UnitMatch
from agentevals.scorers.llm._bias import BiasVerdict
from agentevals.scorers.llm._context_precision import PrecisionVerdict
from agentevals.scorers.llm._context_recall import RecallVerdict
from agentevals.scorers.llm._context_relevance import ContextEvaluation
from agentevals.scorers.llm._factuality import FactualityVerdict
from agentevals.scorers.llm._faithfulness import FaithfulnessVerdict
from agentevals.scorers.llm._hallucination import HallucinationVerdict
from agentevals.scorers.llm._noise_sensitivity import DimensionImpact
from agentevals.scorers.llm._toxicity import ToxicityVerdict
from agentevals.testing import FakeJudgeServer

CONTEXT = ["Paris is the capital of France."]

LABELS: list[tuple[type[BaseModel], str, dict[str, Any], list[str]]] = [
    (FaithfulnessVerdict, "verdict", {"claim": "c"}, ["yes", "no", "unsure"]),
    (HallucinationVerdict, "verdict", {"statement": "s"}, ["yes", "no"]),
    (RecallVerdict, "verdict", {"claim": "c"}, ["yes", "no"]),
    (PrecisionVerdict, "verdict", {"context_index": 0}, ["yes", "no"]),
    (BiasVerdict, "result", {"opinion": "o"}, ["yes", "no"]),
    (ToxicityVerdict, "verdict", {"statement": "s"}, ["yes", "no"]),
    (RelevancyVerdict, "result", {"statement": "s"}, ["yes", "unsure", "no"]),
    (
        ContextEvaluation,
        "relevance_level",
        {"context_index": 0, "context_piece": "p", "was_used": True},
        ["high", "medium", "low", "none"],
    ),
    (
        UnitMatch,
        "match_type",
        {"ground_truth_unit": "g", "output_unit": None},
        ["exact", "semantic", "partial", "missing"],
    ),
    (FactualityVerdict, "relation", {}, ["subset", "superset", "same", "conflict", "equivalent"]),
    (
        DimensionImpact,
        "impact_level",
        {"dimension": "d", "specific_changes": "", "noise_influence": ""},
        ["none", "minimal", "moderate", "significant", "severe"],
    ),
]


@pytest.mark.parametrize(("model", "field", "others", "values"), LABELS, ids=[m.__name__ for m, *_ in LABELS])
def test_a_label_in_any_case_is_read_as_the_schema_spells_it(
    model: type[BaseModel], field: str, others: dict[str, Any], values: list[str]
) -> None:
    for value in values:
        for written in (value.capitalize(), value.upper(), f" {value} "):
            assert getattr(model.model_validate({**others, field: written}), field) == value
    with pytest.raises(ValidationError):
        model.model_validate({**others, field: "maybe"})
    assert model.model_json_schema()["properties"][field]["enum"] == values


@pytest.mark.parametrize(
    "model",
    [
        FaithfulnessVerdict,
        HallucinationVerdict,
        RecallVerdict,
        PrecisionVerdict,
        BiasVerdict,
        ToxicityVerdict,
        RelevancyVerdict,
        FactualityVerdict,
    ],
)
def test_a_verdict_without_a_reason_has_an_empty_one(model: type[BaseModel]) -> None:
    fields = next(others | {field: values[0]} for m, field, others, values in LABELS if m is model)
    assert model.model_validate(fields).reason == ""  # type: ignore[attr-defined]


async def test_capitalised_verdicts_and_a_missing_reason_score_through_the_judge(
    judge_server: FakeJudgeServer,
) -> None:
    verdicts = [
        {"claim": "c0", "verdict": "Yes", "reason": "stated"},
        {"claim": "c1", "verdict": "NO"},
        {"claim": "c2", "verdict": " Unsure ", "reason": "not in the context"},
    ]
    judge_server.push({"claims": ["c0", "c1", "c2"]}, {"verdicts": verdicts}, "r")
    result = await create_faithfulness_scorer(judge_server.judge(), context=CONTEXT).run(
        input="q", output="Paris is the capital. It is in Spain. It has a river."
    )
    assert result.score == 0.33
    assert [(v.verdict, v.reason) for v in result.analyze_step_result.verdicts] == [
        ("yes", "stated"),
        ("no", ""),
        ("unsure", "not in the context"),
    ]
    schema = judge_server.requests[1].body["response_format"]["json_schema"]["schema"]
    assert schema["$defs"]["FaithfulnessVerdict"]["properties"]["verdict"]["enum"] == ["yes", "no", "unsure"]


EMPTY_EXTRACTIONS: dict[str, tuple[Callable[[Judge], Scorer], dict[str, Any], dict[str, Any], str, str]] = {
    # the scorer, run fields, the judge's empty extraction, the step that asks for it, the list
    "answer_relevancy": (create_answer_relevancy_scorer, {}, {"statements": []}, "preprocess", "statements"),
    "faithfulness": (
        lambda judge: create_faithfulness_scorer(judge, context=CONTEXT),
        {},
        {"claims": []},
        "preprocess",
        "claims",
    ),
    "hallucination": (
        lambda judge: create_hallucination_scorer(judge, context=CONTEXT),
        {},
        {"claims": []},
        "preprocess",
        "claims",
    ),
    "toxicity": (create_toxicity_scorer, {}, {"verdicts": []}, "analyze", "verdicts"),
    "context_recall": (
        lambda judge: create_context_recall_scorer(judge, context=CONTEXT),
        {"ground_truth": "Paris is the capital of France."},
        {"claims": []},
        "preprocess",
        "claims",
    ),
    "summarization_claims": (
        create_summarization_scorer,
        {},
        {"alignment": [], "questions": ["What is the capital?"]},
        "preprocess",
        "alignment",
    ),
    "summarization_questions": (
        create_summarization_scorer,
        {},
        {"alignment": [{"claim": "Paris is the capital.", "supported": True}], "questions": []},
        "preprocess",
        "questions",
    ),
}


@pytest.mark.parametrize("name", sorted(EMPTY_EXTRACTIONS))
async def test_nothing_extracted_from_a_non_empty_text_is_asked_again_then_a_failed_record_that_says_so(
    judge_server: FakeJudgeServer, name: str
) -> None:
    factory, fields, reply, step, listed = EMPTY_EXTRACTIONS[name]
    judge_server.push(*[reply] * 4)
    run = Run(input="What is the capital of France?", output="Paris is the capital of France.", **fields)
    record = await score_once(run, factory(judge_server.judge()), None, asyncio.Semaphore(1), FailureLog())
    assert isinstance(record, ScoreFailure)
    assert (record.error_type, record.failed_step) == ("JudgeOutputError", step)
    assert f"at {listed}: List should have at least 1 item" in record.error_message
    assert len(judge_server.requests) == 4 and [c.attempts for c in record.judge_calls] == [4]
    assert all(asks_again_for(retry, listed, 1) for retry in judge_server.requests[1:])
    assert record.judge_replies == {step: json.dumps(reply)}  # the last empty extraction is kept
