"""Output schemas computed per call: a prompt step's ``output_schema`` as a function of the run and the
earlier results, and ``with_item_counts``, which states how many items a list of the reply holds."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import BaseModel, ValidationError

from agentevals import Judge, PromptStep, Scorer, ScorerError, create_scorer
from agentevals._scoring._item_counts import with_item_counts
from agentevals.steps import StepResults
from agentevals.testing import FakeJudgeServer


class Items(BaseModel):
    items: list[str]


class Verdicts(BaseModel):
    verdicts: list[str]
    notes: list[str] = []


def test_the_counts_are_in_the_json_schema_and_the_lower_bound_is_validated() -> None:
    counted = with_item_counts(Verdicts, verdicts=2, notes=(0, 3))
    fields = counted.model_json_schema()["properties"]
    assert (fields["verdicts"]["minItems"], fields["verdicts"]["maxItems"]) == (2, 2)
    assert "minItems" not in fields["notes"] and fields["notes"]["maxItems"] == 3
    with pytest.raises(ValidationError, match="at least 2 items"):
        counted.model_validate({"verdicts": ["yes"]})
    extra = counted.model_validate({"verdicts": ["yes", "no", "yes"], "notes": ["a", "b", "c", "d"]})
    assert isinstance(extra, Verdicts) and len(extra.verdicts) == 3  # more than asked: kept
    assert counted.model_validate({"verdicts": ["yes", "no"]}).notes == []  # a default stays


def test_a_count_is_made_once_and_no_bound_keeps_the_schema() -> None:
    assert with_item_counts(Verdicts, verdicts=2) is with_item_counts(Verdicts, verdicts=2)
    assert with_item_counts(Verdicts, verdicts=(0, None)) is Verdicts
    assert with_item_counts(Verdicts, verdicts=2).__name__ == "Verdicts"  # errors name the step's schema


@pytest.mark.parametrize("count", [-1, (3, 2), (-1, None)])
def test_an_impossible_count_is_refused(count: int | tuple[int, int | None]) -> None:
    with pytest.raises(ValueError, match="item count of 'verdicts'"):
        with_item_counts(Verdicts, verdicts=count)


def test_an_unknown_field_is_refused() -> None:
    with pytest.raises(ValueError, match="Verdicts has no field 'claims'"):
        with_item_counts(Verdicts, claims=1)


def _scorer(judge: Judge, output_schema: Callable[..., type[BaseModel]]) -> Scorer:
    step = PromptStep("One verdict per item", lambda results: f"Judge {results}", output_schema)
    return (
        create_scorer(id="per-item", judge=judge)
        .preprocess(lambda run: run.output_text.split(". "))
        .analyze(step)
        .generate_score(lambda results: results.analyze_step_result.verdicts.count("yes") / 2)
    )


async def test_a_prompt_step_schema_computed_from_the_results_is_sent_and_validated(
    judge_server: FakeJudgeServer,
) -> None:
    async def one_per_item(results: StepResults) -> type[Verdicts]:
        return with_item_counts(Verdicts, verdicts=len(results.preprocess_step_result))

    judge_server.push({"verdicts": ["yes"]}, {"verdicts": ["yes", "no"]})
    result = await _scorer(judge_server.judge(), one_per_item).run(output="A. B")
    assert result.score == 0.5 and result.judge_calls[0].attempts == 2
    sent = judge_server.requests[0].body["response_format"]["json_schema"]["schema"]
    assert sent["properties"]["verdicts"]["minItems"] == sent["properties"]["verdicts"]["maxItems"] == 2


async def test_a_schema_function_must_return_a_model(judge_server: FakeJudgeServer) -> None:
    with pytest.raises(ScorerError, match="output_schema must return a pydantic BaseModel subclass"):
        await _scorer(judge_server.judge(), lambda run: dict).run(output="A. B")
    assert judge_server.requests == []
    with pytest.raises(TypeError, match="or a function returning one"):
        PromptStep("d", lambda: "p", Items(items=[]))  # type: ignore[arg-type]
