"""Context precision (MAP) against scripted judge replies."""

from __future__ import annotations

from typing import Any

import pytest
from item_counts import asks_again_for, item_bounds

from agentevals import Run, ScorerError
from agentevals.scorers.llm import create_context_precision_scorer
from agentevals.testing import FakeJudgeServer, Reply

DOCS = ["Photosynthesis uses light.", "Cats sleep a lot.", "Chlorophyll absorbs light.", "Paris is big."]


def verdicts(*labels: str, order: list[int] | None = None, first: int = 1) -> dict[str, Any]:
    """One verdict per label, numbered from ``first`` (1 as the prompt numbers the pieces), in ``order``."""
    indices = order or list(range(len(labels)))
    return {"verdicts": [{"context_index": i + first, "verdict": labels[i], "reason": "r"} for i in indices]}


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (["yes", "no", "yes", "no"], 0.83),  # the seed's worked example: (1 + 2/3) / 2
        (["yes", "yes"], 1.0),
        (["no", "no"], 0.0),
        (["no", "yes"], 0.5),
        (["no", "no", "yes"], 0.33),
    ],
)
async def test_map_formula(judge_server: FakeJudgeServer, labels: list[str], expected: float) -> None:
    judge_server.push(verdicts(*labels), "reason")
    scorer = create_context_precision_scorer(judge_server.judge(), context=DOCS[: len(labels)])
    result = await scorer.run(input="How does photosynthesis work?", output="With light.")
    assert result.score == expected and result.reason == "reason"


async def test_verdicts_are_ranked_by_context_index(judge_server: FakeJudgeServer) -> None:
    judge_server.push(verdicts("yes", "no", "yes", "no", order=[3, 2, 1, 0]), "r")
    result = await create_context_precision_scorer(judge_server.judge(), context=DOCS, scale=100).run(
        input="q", output="a"
    )
    assert result.raw_score == 83.33


async def test_indices_counted_from_zero_are_read_too(judge_server: FakeJudgeServer) -> None:
    judge_server.push(verdicts("no", "yes", first=0), "r")
    result = await create_context_precision_scorer(judge_server.judge(), context=DOCS[:2]).run(
        input="q", output="a"
    )
    assert result.score == 0.5


async def test_fields_prompts_and_expected_answer(judge_server: FakeJudgeServer) -> None:
    judge_server.push(verdicts("yes", "no"), "The first piece is relevant and ranked first.")
    scorer = create_context_precision_scorer(judge_server.judge(), {"context": DOCS[:2]})
    result = await scorer.run(
        input="How does photosynthesis work?", output="Light.", ground_truth="Plants use light"
    )
    assert result.score == 1.0 and result.preprocess_step_result == {"context": DOCS[:2]}
    assert [v.verdict for v in result.analyze_step_result.verdicts] == ["yes", "no"]
    assert "[1] Photosynthesis uses light." in result.analyze_prompt  # type: ignore[operator]
    assert "context_index 1 to 2" in result.analyze_prompt  # type: ignore[operator]
    assert "Plants use light" in result.analyze_prompt  # type: ignore[operator]
    assert "[2] no: r" in result.generate_reason_prompt  # type: ignore[operator]
    assert result.reason == "The first piece is relevant and ranked first."


async def test_context_sources(judge_server: FakeJudgeServer) -> None:
    scorer = create_context_precision_scorer(
        judge_server.judge(), context=["static"], get_context=lambda input, output: ["extracted"]
    )
    judge_server.push(verdicts("yes"), "r")
    result = await scorer.run(input="q", output="a")
    assert "[1] extracted" in result.analyze_prompt  # type: ignore[operator]
    judge_server.push(verdicts("yes"), "r")
    result = await create_context_precision_scorer(judge_server.judge()).run(
        Run(input="q", output="a", context=["from run"])
    )
    assert "[1] from run" in result.analyze_prompt  # type: ignore[operator]


async def test_errors(judge_server: FakeJudgeServer) -> None:
    with pytest.raises(ValueError, match="context cannot be empty"):
        create_context_precision_scorer("openai/gpt-4o-mini", context=[])
    with pytest.raises(ScorerError, match="No context available for context precision"):
        await create_context_precision_scorer(judge_server.judge(), get_context=lambda run: []).run(
            input="q", output="a"
        )
    judge_server.push(verdicts("yes"), verdicts("yes", "no"), "r")  # one verdict short, then all
    scorer = create_context_precision_scorer(judge_server.judge(), context=DOCS[:2])
    assert (await scorer.run(input="q", output="a")).judge_calls[0].attempts == 2
    assert item_bounds(judge_server.requests[0], "verdicts") == (2, 2)
    assert asks_again_for(judge_server.requests[1], "verdicts", 2)
    judge_server.push({"verdicts": [{"context_index": 1, "verdict": "yes", "reason": "r"}] * 2})
    with pytest.raises(ScorerError, match=r"must be 1..2 \(or 0..1\), once each"):
        await create_context_precision_scorer(judge_server.judge(), context=DOCS[:2]).run(
            input="q", output="a"
        )


async def test_malformed_reply_is_retried(judge_server: FakeJudgeServer) -> None:
    judge_server.push(Reply.malformed(), verdicts("no", "yes"), "r")
    result = await create_context_precision_scorer(judge_server.judge(), context=DOCS[:2]).run(
        input="q", output="a"
    )
    assert result.score == 0.5 and result.judge_calls[0].attempts == 2


@pytest.mark.parametrize(
    "question",
    ["How does photosynthesis work in plants?", "What are the mental and physical benefits of exercise?"],
)
async def test_seed_example(judge_server: FakeJudgeServer, question: str) -> None:
    """Twin of the seed: the extractor reads documents the agent retrieved (here in run metadata)."""
    scorer = create_context_precision_scorer(
        judge_server.judge(), get_context=lambda run: run.metadata.get("retrieved_context", [])
    )
    judge_server.push(verdicts("yes", "no", "yes", "no"), "Relevant pieces are first and third.")
    result = await scorer.run(Run(input=question, output="answer", metadata={"retrieved_context": DOCS}))
    assert result.score == 0.83


async def test_seed_large_context_configuration(judge_server: FakeJudgeServer) -> None:
    """Twin of the seed's 'large context evaluation' configuration: five static documents."""
    documents = [
        "Document 1: Highly relevant content...",
        "Document 2: Somewhat related content...",
        "Document 3: Tangentially related...",
        "Document 4: Not relevant...",
        "Document 5: Highly relevant content...",
    ]
    scorer = create_context_precision_scorer(judge_server.judge(), {"context": documents})
    judge_server.push(verdicts("yes", "yes", "no", "no", "yes"), "r")
    result = await scorer.run(input="q", output="a")
    assert result.score == 0.87  # (1/1 + 2/2 + 3/5) / 3
    assert "[5] Document 5: Highly relevant content..." in (result.analyze_prompt or "")


async def test_extractor_runs_once_per_run(judge_server: FakeJudgeServer) -> None:
    calls: list[str] = []

    async def search(run: Run) -> list[str]:
        calls.append(run.input_text)
        return DOCS[:2]

    judge_server.push(verdicts("yes", "yes"), "r")
    result = await create_context_precision_scorer(judge_server.judge(), get_context=search).run(
        input="q", output="a"
    )
    assert result.score == 1.0 and calls == ["q"]
