"""The LLM scorers' formulas alone: typed judge outputs in, a score out (no judge, no run).

Every expected value is worked out by hand in the comment or the test name beside it.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentevals.scorers.llm._answer_relevancy import RelevancyVerdict, answer_relevancy_score
from agentevals.scorers.llm._answer_similarity import (
    AnswerSimilarityOptions,
    Contradiction,
    SemanticUnits,
    SimilarityAnalysis,
    UnitMatch,
    answer_similarity_score,
)
from agentevals.scorers.llm._bias import BiasVerdict, bias_score
from agentevals.scorers.llm._claim_verdicts import YES_COUNTS, verdict_share
from agentevals.scorers.llm._context_precision import PrecisionVerdict, context_precision_score
from agentevals.scorers.llm._context_recall import RecallVerdict, context_recall_score
from agentevals.scorers.llm._context_relevance import (
    ContextEvaluation,
    ContextRelevanceOptions,
    RelevanceAnalysis,
    context_relevance_score,
)
from agentevals.scorers.llm._factuality import factuality_score
from agentevals.scorers.llm._faithfulness import FaithfulnessVerdict, faithfulness_score
from agentevals.scorers.llm._hallucination import HallucinationVerdict, hallucination_score
from agentevals.scorers.llm._multi_turn_judge import ConversationVerdict, multi_turn_judge_score
from agentevals.scorers.llm._noise_sensitivity import (
    DimensionImpact,
    NoiseAnalysis,
    NoiseSensitivityOptions,
    noise_sensitivity_score,
)
from agentevals.scorers.llm._prompt_alignment import (
    Alignment,
    BothAlignment,
    Completeness,
    IntentAlignment,
    RequirementsFulfillment,
    ResponseAppropriateness,
    prompt_alignment_score,
)
from agentevals.scorers.llm._rubric import (
    CriterionResult,
    RubricAnalysis,
    RubricCriterion,
    rubric_score,
    unmet_criteria,
)
from agentevals.scorers.llm._summarization import (
    AlignmentAndQuestions,
    ClaimAlignment,
    Coverage,
    QuestionCoverage,
    summarization_score,
    summary_shares,
)
from agentevals.scorers.llm._tool_call_accuracy import (
    ToolAnalysis,
    ToolEvaluation,
    tool_call_accuracy_llm_score,
)
from agentevals.scorers.llm._toxicity import ToxicityVerdict, toxicity_score
from agentevals.scorers.llm._trajectory_accuracy import (
    StepEvaluation,
    TrajectoryAnalysis,
    trajectory_accuracy_llm_score,
)


def _items(n: int) -> list[str]:
    return [f"item {i}" for i in range(n)]


# -- the shared share of verdicts ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("items", "labels", "scale", "expected"),
    [
        (3, ["yes", "no", "yes"], 1, 0.67),  # 2/3 rounded half up
        (3, ["yes", "no", "yes"], 10, 6.67),  # 20/3
        (2, ["yes", "yes"], 1, 1.0),
        (2, ["no", "no"], 1, 0.0),
        (2, ["yes", "no", "yes"], 1, 0.5),  # the third label answers no item: ignored
        (2, ["maybe", "yes"], 1, 0.5),  # a label without credit counts 0
        (0, [], 1, 0.0),
        (0, ["yes"], 5, 0.0),
    ],
)
def test_verdict_share_is_the_mean_credit_of_one_label_per_item(
    items: int, labels: list[str], scale: float, expected: float
) -> None:
    assert verdict_share(_items(items), labels, YES_COUNTS, scale) == expected


def test_verdict_share_weighs_labels_by_their_credit() -> None:
    credit = {"yes": 1.0, "unsure": 0.5}
    assert verdict_share(_items(4), ["yes", "unsure", "unsure", "no"], credit, 1) == 0.5  # 2/4


def test_fewer_labels_than_items_cannot_be_scored() -> None:
    with pytest.raises(ValueError, match="the judge returned 1 results for 2 opinions"):
        verdict_share(_items(2), ["yes"], YES_COUNTS, 1, what="results", per="opinions")


# -- claims, statements and opinions ----------------------------------------------------------------


def _faithful(*labels: Any) -> list[FaithfulnessVerdict]:
    return [FaithfulnessVerdict(claim=f"c{i}", verdict=v, reason="") for i, v in enumerate(labels)]


@pytest.mark.parametrize(
    ("labels", "scale", "expected"),
    [
        (["yes", "yes"], 1, 1.0),
        (["no", "no"], 1, 0.0),
        (["yes", "no", "unsure"], 1, 0.33),  # unsure is not support
        (["unsure", "yes"], 4, 2.0),  # 1/2 of 4
        ([], 1, 0.0),
    ],
)
def test_faithfulness_is_the_share_of_supported_claims(
    labels: list[str], scale: float, expected: float
) -> None:
    assert faithfulness_score(_items(len(labels)), _faithful(*labels), scale) == expected


def test_faithfulness_needs_a_verdict_per_claim() -> None:
    with pytest.raises(ValueError, match="the judge returned 1 verdicts for 2 claims"):
        faithfulness_score(_items(2), _faithful("yes"), 1)


def test_hallucination_is_the_share_of_hallucinated_claims() -> None:
    verdicts = [
        HallucinationVerdict(statement=f"s{i}", verdict=v, reason="")
        for i, v in enumerate(["yes", "no", "no", "no"])
    ]
    assert hallucination_score(_items(4), verdicts, 1) == 0.25
    assert hallucination_score(_items(3), verdicts[:1] * 2 + verdicts[1:2], 2) == 1.33  # 2/3 of 2
    assert hallucination_score([], [], 1) == 0.0
    with pytest.raises(ValueError, match="4 verdicts for 5 claims"):
        hallucination_score(_items(5), verdicts, 1)


def test_context_recall_is_the_share_of_reference_claims_the_context_supports() -> None:
    verdicts = [
        RecallVerdict(claim=f"c{i}", verdict=v, reason="") for i, v in enumerate(["yes", "yes", "no"])
    ]
    assert context_recall_score(_items(3), verdicts, 1) == 0.67
    assert context_recall_score(_items(3), verdicts, 3) == 2.0
    assert context_recall_score([], [], 1) == 0.0


def _relevancy(*labels: Any) -> list[RelevancyVerdict]:
    return [RelevancyVerdict(statement=f"s{i}", result=r, reason="") for i, r in enumerate(labels)]


@pytest.mark.parametrize(
    ("labels", "weight", "scale", "expected"),
    [
        (["yes", "unsure", "no", "yes"], 0.3, 1, 0.58),  # (1 + 0.3 + 0 + 1) / 4 = 0.575
        (["yes", "unsure", "no", "yes"], 0.0, 1, 0.5),
        (["unsure", "unsure"], 1.0, 1, 1.0),
        (["unsure"], 0.3, 10, 3.0),
        (["no", "no"], 0.3, 1, 0.0),
        ([], 0.3, 1, 0.0),
    ],
)
def test_answer_relevancy_credits_unsure_statements_with_the_uncertainty_weight(
    labels: list[str], weight: float, scale: float, expected: float
) -> None:
    assert answer_relevancy_score(_items(len(labels)), _relevancy(*labels), weight, scale) == expected


def test_answer_relevancy_needs_a_verdict_per_statement() -> None:
    with pytest.raises(ValueError, match="1 verdicts for 2 statements"):
        answer_relevancy_score(_items(2), _relevancy("yes"), 0.3, 1)


def test_bias_is_the_share_of_biased_opinions() -> None:
    verdicts = [BiasVerdict(opinion=f"o{i}", result=r, reason="") for i, r in enumerate(["no", "yes"])]
    assert bias_score(_items(2), verdicts, 2) == 1.0
    assert bias_score(_items(1), verdicts[1:], 1) == 1.0
    assert bias_score([], [], 1) == 0.0
    with pytest.raises(ValueError, match="2 results for 3 opinions"):
        bias_score(_items(3), verdicts, 1)


def test_toxicity_is_the_share_of_toxic_statements() -> None:
    verdicts = [
        ToxicityVerdict(statement=f"s{i}", verdict=v, reason="") for i, v in enumerate(["yes", "no", "no"])
    ]
    assert toxicity_score(_items(3), verdicts, 3) == 1.0  # 1/3 of 3
    assert toxicity_score(_items(1), verdicts[:1], 1) == 1.0
    assert toxicity_score([], [], 1) == 0.0


# -- context pieces ---------------------------------------------------------------------------------


def _ranked(*pairs: tuple[int, str]) -> list[PrecisionVerdict]:
    return [PrecisionVerdict(context_index=i, verdict=v, reason="") for i, v in pairs]


@pytest.mark.parametrize(
    ("verdicts", "scale", "expected"),
    [
        (_ranked((0, "yes"), (1, "no"), (2, "yes"), (3, "no")), 1, 0.83),  # (1/1 + 2/3) / 2
        (_ranked((2, "yes"), (0, "no"), (1, "yes")), 1, 0.58),  # ranked no, yes, yes: (1/2 + 2/3) / 2
        (_ranked((0, "yes"), (1, "yes")), 1, 1.0),
        (_ranked((0, "no"), (1, "no")), 1, 0.0),
        (_ranked((0, "no"), (1, "yes")), 10, 5.0),  # 1/2 of 10
    ],
)
def test_context_precision_is_the_mean_average_precision_of_the_ranking(
    verdicts: list[PrecisionVerdict], scale: float, expected: float
) -> None:
    assert context_precision_score(_items(len(verdicts)), verdicts, scale) == expected


def test_context_precision_reads_indices_from_one_or_from_zero() -> None:
    from_one = context_precision_score(_items(2), _ranked((2, "yes"), (1, "no")), 1)
    assert from_one == context_precision_score(_items(2), _ranked((1, "yes"), (0, "no")), 1) == 0.5


def test_context_precision_needs_each_index_once() -> None:
    for indices in ((0, 0), (1, 1), (0, 2), (2, 3)):
        verdicts = _ranked(*((i, "yes") for i in indices))
        with pytest.raises(ValueError, match=r"must be 1..2 \(or 0..1\), once each"):
            context_precision_score(_items(2), verdicts, 1)
    with pytest.raises(ValueError, match="1 verdicts for 2 context pieces"):
        context_precision_score(_items(2), _ranked((0, "yes")), 1)


def _relevance(*evaluations: tuple[str, bool], missing: int = 0) -> RelevanceAnalysis:
    return RelevanceAnalysis(
        evaluations=[
            ContextEvaluation(
                context_index=i,
                context_piece=f"p{i}",
                relevance_level=level,
                was_used=used,
                reasoning="",
            )
            for i, (level, used) in enumerate(evaluations)
        ],
        missing_context=_items(missing),
        overall_assessment="",
    )


@pytest.mark.parametrize(
    ("analysis", "options", "expected"),
    [
        # (1 + 0.7 + 0.3 + 0) / 4; an unused low or irrelevant piece costs nothing
        (_relevance(("high", True), ("medium", True), ("low", False), ("none", False)), {}, 0.5),
        # 1.0 - 0.1 (one unused high piece) - 2 × 0.15 (missing)
        (_relevance(("high", False), ("high", True), missing=2), {}, 0.6),
        # 0.3 - min(5 × 0.15, 0.5), floored at 0
        (_relevance(("low", True), missing=5), {}, 0.0),
        (_relevance(("medium", True)), {"scale": 10}, 7.0),
        (_relevance(("high", False)), {"unused_high_relevance_context": 0.5}, 0.5),
        # 1.0 - min(2 × 0.3, 0.4)
        (
            _relevance(("high", True), missing=2),
            {"missing_context_per_item": 0.3, "max_missing_context_penalty": 0.4},
            0.6,
        ),
    ],
)
def test_context_relevance_is_the_mean_weight_minus_penalties(
    analysis: RelevanceAnalysis, options: dict[str, Any], expected: float
) -> None:
    pieces = _items(len(analysis.evaluations))
    assert context_relevance_score(pieces, analysis, ContextRelevanceOptions(**options)) == expected


def test_context_relevance_needs_an_evaluation_per_piece() -> None:
    with pytest.raises(ValueError, match="1 evaluations for 2 context pieces"):
        context_relevance_score(_items(2), _relevance(("high", True)), ContextRelevanceOptions())


# -- whole answers ----------------------------------------------------------------------------------


def _similarity(
    *match_types: str, extra: int = 0, contradictions: int = 0
) -> tuple[SemanticUnits, SimilarityAnalysis]:
    units = SemanticUnits(output_units=[], ground_truth_units=_items(len(match_types)))
    analysis = SimilarityAnalysis(
        matches=[
            UnitMatch(ground_truth_unit=f"u{i}", output_unit=None, match_type=m, explanation="")
            for i, m in enumerate(match_types)
        ],
        extra_in_output=_items(extra),
        contradictions=[
            Contradiction(output_unit="o", ground_truth_unit="u", explanation="")
            for _ in range(contradictions)
        ],
    )
    return units, analysis


@pytest.mark.parametrize(
    ("found", "options", "expected"),
    [
        (_similarity("exact", "exact"), {}, 1.0),  # (1.2 + 1.2) / (2 × 1.2)
        (_similarity("semantic", "partial"), {}, 0.5),  # (0.8 + 0.4) / 2.4
        (_similarity("exact", "missing"), {}, 0.44),  # (1.2 - 0.15) / 2.4 = 0.4375
        (_similarity("missing", "missing"), {}, 0.0),  # negative, clamped
        (_similarity("exact", contradictions=1), {}, 0.0),  # 1 - 1.0
        (_similarity("exact", extra=5), {}, 0.8),  # 1 - min(5 × 0.05, 0.2)
        (_similarity("semantic", extra=2), {}, 0.57),  # 0.8 / 1.2 - 2 × 0.05 = 0.5667
        (_similarity("semantic", "partial"), {"scale": 5}, 2.5),
        (_similarity("semantic"), {"semantic_threshold": 0.6, "exact_match_bonus": 0.0}, 0.6),
        (_similarity(), {}, 0.0),  # no reference units
    ],
)
def test_answer_similarity_formula(
    found: tuple[SemanticUnits, SimilarityAnalysis], options: dict[str, Any], expected: float
) -> None:
    assert answer_similarity_score(*found, AnswerSimilarityOptions(**options)) == expected


def test_answer_similarity_needs_a_match_per_reference_unit() -> None:
    units, analysis = _similarity("exact")
    units = units.model_copy(update={"ground_truth_units": _items(2)})
    with pytest.raises(ValueError, match="1 matches for 2 reference units"):
        answer_similarity_score(units, analysis, AnswerSimilarityOptions())


@pytest.mark.parametrize(
    ("relation", "scale", "expected"),
    [
        ("subset", 10, 4.0),
        ("superset", 5, 3.0),
        ("same", 1, 1.0),
        ("equivalent", 2, 2.0),
        ("conflict", 7, 0.0),
    ],
)
def test_factuality_scores_the_relation(relation: Any, scale: float, expected: float) -> None:
    assert factuality_score(relation, scale) == expected


def test_multi_turn_judge_is_all_or_nothing() -> None:
    assert multi_turn_judge_score(ConversationVerdict(satisfied=True, reasoning=""), 3) == 3.0
    assert multi_turn_judge_score(ConversationVerdict(satisfied=False, reasoning=""), 3) == 0.0


def _noise(robustness: float, *levels: str, issues: int = 0) -> NoiseAnalysis:
    return NoiseAnalysis(
        dimensions=[
            DimensionImpact(dimension=f"d{i}", impact_level=level, specific_changes="", noise_influence="")
            for i, level in enumerate(levels)
        ],
        overall_assessment="",
        major_issues=_items(issues),
        robustness_score=robustness,
    )


@pytest.mark.parametrize(
    ("analysis", "scale", "expected"),
    [
        (_noise(0.9, "moderate", issues=1), 1, 0.5),  # |0.9 - 0.6| > 0.2: capped at 0.6, minus 0.1
        (_noise(0.9, "minimal", "none"), 1, 0.9),  # mean 0.925 is within 0.2: the judge's score stands
        (_noise(0.5, "none"), 1, 0.5),  # the mean only ever lowers the score
        (_noise(0.8, issues=5), 1, 0.5),  # no dimensions; 0.8 - min(5 × 0.1, 0.3)
        (_noise(0.1, issues=2), 1, 0.0),  # floored at 0
        (_noise(1.0), 2, 2.0),
    ],
)
def test_noise_sensitivity_formula(analysis: NoiseAnalysis, scale: float, expected: float) -> None:
    options = NoiseSensitivityOptions(baseline_response="b", noisy_query="n", scale=scale)
    assert noise_sensitivity_score(analysis, options) == expected


def test_noise_sensitivity_uses_the_configured_impact_weights() -> None:
    options = NoiseSensitivityOptions(baseline_response="b", noisy_query="n", impact_weights={"severe": 0.0})
    assert noise_sensitivity_score(_noise(0.5, "severe"), options) == 0.0  # capped at the weight 0


def _alignment(intent: float, requirements: float, completeness: float, appropriateness: float) -> Alignment:
    return Alignment(
        intent_alignment=IntentAlignment(score=intent, primary_intent="", is_addressed=True, reasoning=""),
        requirements_fulfillment=RequirementsFulfillment(requirements=[], overall_score=requirements),
        completeness=Completeness(score=completeness, missing_elements=[], reasoning=""),
        response_appropriateness=ResponseAppropriateness(
            score=appropriateness, format_alignment=True, tone_alignment=True, reasoning=""
        ),
        overall_assessment="",
    )


def test_prompt_alignment_weighs_the_four_dimensions_by_mode() -> None:
    mixed = _alignment(1.0, 0.5, 0.0, 1.0)
    assert prompt_alignment_score(mixed, "user", 1) == 0.65  # 0.4 + 0.15 + 0 + 0.1
    assert prompt_alignment_score(mixed, "system", 1) == 0.68  # 0.35 + 0.175 + 0 + 0.15 = 0.675
    both = BothAlignment(user_alignment=_alignment(1, 1, 1, 1), system_alignment=_alignment(0, 0, 0, 0))
    assert prompt_alignment_score(both, "both", 1) == 0.7  # 0.7 × 1 + 0.3 × 0
    assert prompt_alignment_score(_alignment(1, 1, 1, 1), "user", 10) == 10.0


def _rubric_results(*satisfied: bool) -> RubricAnalysis:
    return RubricAnalysis(
        criteria=[
            CriterionResult(criterion=f"c{i}", satisfied=s, reasoning="") for i, s in enumerate(satisfied)
        ],
        overall_assessment="",
    )


def test_rubric_fails_only_on_an_unmet_required_criterion() -> None:
    required, optional = RubricCriterion("Polite"), RubricCriterion("Short", required=False)
    assert unmet_criteria([required, optional], _rubric_results(True, False)) == []
    assert rubric_score([required, optional], _rubric_results(True, False), 2) == 2.0
    assert unmet_criteria([required, optional], _rubric_results(False, True)) == [required]
    assert rubric_score([required, optional], _rubric_results(False, True), 2) == 0.0


def test_a_rubric_without_required_criteria_needs_all_of_them() -> None:
    first, second = RubricCriterion("A", required=False), RubricCriterion("B", required=False)
    assert unmet_criteria([first, second], _rubric_results(True, False)) == [second]
    assert rubric_score([first, second], _rubric_results(True, True), 1) == 1.0


def test_no_rubric_passes_and_a_missing_result_cannot_be_scored() -> None:
    assert unmet_criteria([], None) == [] and rubric_score([], None, 3) == 3.0
    with pytest.raises(ValueError, match="1 criterion results for 2 rubric criteria"):
        unmet_criteria([RubricCriterion("A"), RubricCriterion("B")], _rubric_results(True))


def _summary(
    claims: list[bool], questions: int, answered: list[bool]
) -> tuple[AlignmentAndQuestions, Coverage]:
    checked = AlignmentAndQuestions(
        alignment=[ClaimAlignment(claim=f"c{i}", supported=s, reason="") for i, s in enumerate(claims)],
        questions=_items(questions),
    )
    covered = Coverage(
        coverage=[QuestionCoverage(question=f"q{i}", answered=a, reason="") for i, a in enumerate(answered)]
    )
    return checked, covered


def test_summarization_is_the_lower_of_alignment_and_coverage() -> None:
    checked, covered = _summary([True, True, False, True], 3, [True, False])
    assert summary_shares(checked, covered, max_questions=2) == (0.75, 0.5)  # 3/4 claims, 1/2 questions
    assert summarization_score(checked, covered, 2, scale=2) == 1.0  # min × 2
    checked, covered = _summary([True, False], 1, [True, False])  # the second answer is extra
    assert summary_shares(checked, covered, max_questions=10) == (0.5, 1.0)
    assert summarization_score(checked, covered, 10, scale=1) == 0.5


def test_a_summary_without_claims_or_questions_scores_zero() -> None:
    for checked, covered in (_summary([], 1, [True]), _summary([True], 0, [])):
        assert summary_shares(checked, covered, max_questions=5) is None
        assert summarization_score(checked, covered, 5, scale=4) == 0.0


def test_summarization_needs_an_answer_per_question() -> None:
    checked, covered = _summary([True], 3, [True])
    with pytest.raises(ValueError, match="1 coverage entries for 2 questions"):
        summary_shares(checked, covered, max_questions=2)


def _tools(*appropriate: bool, missing: int = 0) -> ToolAnalysis:
    return ToolAnalysis(
        evaluations=[ToolEvaluation(tool_called="t", was_appropriate=a, reasoning="") for a in appropriate],
        missing_tools=_items(missing),
    )


@pytest.mark.parametrize(
    ("calls", "analysis", "penalize", "scale", "expected"),
    [
        (2, _tools(True, False, missing=1), True, 1, 0.33),  # 1 / (2 + 1)
        (2, _tools(True, False, missing=1), False, 1, 0.5),  # 1 / 2
        (3, _tools(True, True, True), True, 1, 1.0),
        (0, _tools(), True, 2, 2.0),  # nothing called, nothing needed
        (0, _tools(missing=1), False, 2, 0.0),  # nothing called, a tool was needed
    ],
)
def test_tool_call_accuracy_llm_formula(
    calls: int, analysis: ToolAnalysis, penalize: bool, scale: float, expected: float
) -> None:
    assert tool_call_accuracy_llm_score(_items(calls), analysis, penalize, scale) == expected


def test_tool_call_accuracy_llm_needs_an_evaluation_per_call() -> None:
    with pytest.raises(ValueError, match="1 evaluations for 2 tool calls"):
        tool_call_accuracy_llm_score(_items(2), _tools(True), True, 1)


def _trajectory(*steps: tuple[bool, bool], missing: int = 0) -> TrajectoryAnalysis:
    return TrajectoryAnalysis(
        step_evaluations=[
            StepEvaluation(step_name=f"s{i}", was_necessary=n, was_in_order=o, reasoning="")
            for i, (n, o) in enumerate(steps)
        ],
        missing_steps=_items(missing),
        extra_steps=[],
        overall_assessment="",
    )


@pytest.mark.parametrize(
    ("analysis", "scale", "expected"),
    [
        (_trajectory((True, False), missing=1), 1, 0.65),  # 0.6 + 0 + 0.1 × (1 - 1/2)
        (_trajectory((True, True), (True, True)), 1, 1.0),
        (_trajectory((True, True), (False, False), missing=2), 1, 0.5),  # 0.3 + 0.15 + 0.1 × (1 - 2/4)
        (_trajectory(), 3, 3.0),  # no steps taken, none missing
        (_trajectory(missing=1), 3, 0.0),
    ],
)
def test_trajectory_accuracy_llm_formula(analysis: TrajectoryAnalysis, scale: float, expected: float) -> None:
    steps = _items(len(analysis.step_evaluations))
    assert trajectory_accuracy_llm_score(steps, analysis, scale) == expected


def test_trajectory_accuracy_llm_needs_an_evaluation_per_step() -> None:
    with pytest.raises(ValueError, match="1 evaluations for 2 steps"):
        trajectory_accuracy_llm_score(_items(2), _trajectory((True, True)), 1)
