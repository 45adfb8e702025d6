"""Every LLM-judged scorer end to end against a real model: llama.cpp's OpenAI-compatible server running
SmolLM2-135M-Instruct, through LiteLLM, configured as a new user would (``Judge(model="openai/...",
api_base=...)``). The model is tiny: what is asserted is that each scorer gets a parsed score, with its
tokens counted and within its timeout, not that the verdicts are right."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from agentevals import Judge, Run, Scorer
from agentevals.scorers import llm
from agentevals.scorers.utils import create_agent_test_run, create_test_message, create_tool_invocation

QUESTION = "What is the capital of France?"
ANSWER = "The capital of France is Paris."
CONTEXT = ["Paris is the capital and largest city of France.", "France is a country in Western Europe."]
JUDGE_TIMEOUT = 120.0


def _plain_run(**fields: Any) -> Run:
    return Run(input=QUESTION, output=ANSWER, **fields)


def _agent_run() -> Run:
    """A run with a system prompt and one tool call, for the scorers that read them."""
    return create_agent_test_run(
        input_messages=[create_test_message(QUESTION, role="user")],
        output=[
            create_test_message(
                ANSWER,
                role="assistant",
                tool_invocations=[
                    create_tool_invocation(
                        tool_name="search", args={"q": "capital of France"}, result="Paris"
                    )
                ],
            )
        ],
        system_messages=["You are a helpful geography assistant. Answer in one sentence."],
    )


#: Each LLM scorer with the options its docs give and a simple run it can score.
CASES: Mapping[str, tuple[Callable[..., Scorer], dict[str, Any], Callable[[], Run]]] = {
    "answer_relevancy": (llm.create_answer_relevancy_scorer, {}, _plain_run),
    "answer_similarity": (
        llm.create_answer_similarity_scorer,
        {},
        lambda: _plain_run(ground_truth="Paris is the capital of France."),
    ),
    "bias": (llm.create_bias_scorer, {}, _plain_run),
    "context_precision": (
        llm.create_context_precision_scorer,
        {"context": CONTEXT},
        lambda: _plain_run(ground_truth="Paris"),
    ),
    "context_recall": (
        llm.create_context_recall_scorer,
        {"context": CONTEXT},
        lambda: _plain_run(ground_truth="Paris is the capital of France."),
    ),
    "context_relevance": (llm.create_context_relevance_scorer, {"context": CONTEXT}, _plain_run),
    "factuality": (
        llm.create_factuality_scorer,
        {},
        lambda: _plain_run(ground_truth="Paris is the capital of France."),
    ),
    "faithfulness": (llm.create_faithfulness_scorer, {"context": CONTEXT}, _plain_run),
    "hallucination": (llm.create_hallucination_scorer, {"context": CONTEXT}, _plain_run),
    "multi_turn_judge": (
        llm.create_multi_turn_judge_scorer,
        {"criterion": "The assistant answers the user's question."},
        _plain_run,
    ),
    "noise_sensitivity": (
        llm.create_noise_sensitivity_scorer,
        {"baseline_response": ANSWER, "noisy_query": QUESTION + " Also, bananas are blue."},
        _plain_run,
    ),
    "prompt_alignment": (llm.create_prompt_alignment_scorer, {}, _agent_run),
    "rubric": (
        llm.create_rubric_scorer,
        {"criteria": ["Names the capital city", "Is one sentence"]},
        _plain_run,
    ),
    "summarization": (
        llm.create_summarization_scorer,
        {"source": "Paris is the capital of France. It lies on the Seine."},
        _plain_run,
    ),
    "tool_call_accuracy_llm": (
        llm.create_tool_call_accuracy_scorer_llm,
        {"available_tools": [{"name": "search", "description": "Search the web"}]},
        _agent_run,
    ),
    "toxicity": (llm.create_toxicity_scorer, {}, _plain_run),
    "trajectory_accuracy_llm": (
        llm.create_trajectory_accuracy_scorer_llm,
        {"expected_trajectory": [{"name": "search", "step_type": "tool_call"}]},
        _agent_run,
    ),
}


def test_every_llm_scorer_is_covered() -> None:
    factories = {name for name in llm.__all__ if name.startswith("create_")}
    covered = {factory.__name__ for factory, _, _ in CASES.values()}
    assert covered == factories


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_scorer_gets_a_parsed_score_from_a_real_model(llama_server: str, name: str) -> None:
    factory, options, make_run = CASES[name]
    judge = Judge(model="openai/smollm2", api_base=llama_server, api_key="no-key", timeout=JUDGE_TIMEOUT)
    scorer = factory(judge, **options)
    result = asyncio.run(scorer.run(make_run()))
    assert 0.0 <= result.score <= 1.0, result
    assert result.judge_calls, "the judge was called"
    for call in result.judge_calls:
        assert call.ok and call.prompt_tokens > 0 and call.completion_tokens > 0, call
        assert call.duration_ms <= JUDGE_TIMEOUT * 1000 * call.attempts, (
            call
        )  # each attempt within its timeout
