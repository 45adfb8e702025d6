"""create_trajectory_scorer: weighted dimensions, blacklist hard fail, nested expectations."""

from __future__ import annotations

import pytest

from agentevals import Run
from agentevals.scorers import create_trajectory_scorer

DEFAULTS = {"steps": [{"name": "search"}, {"name": "answer"}], "max_steps": 3, "blacklisted_tools": ["rm"]}
scorer = create_trajectory_scorer(defaults=DEFAULTS)


def _score(*steps: dict[str, object], **run_fields: object) -> float:
    return scorer.run_sync(Run(input="q", output=list(steps), **run_fields)).score


def test_identity() -> None:
    assert (scorer.id, scorer.type) == ("trajectory", "trajectory")


def test_recorded_mastra_scores() -> None:
    assert _score({"name": "search"}, {"name": "answer"}) == 1.0
    assert _score({"name": "search"}, {"name": "x"}, {"name": "y"}, {"name": "answer"}) == 0.94
    retries = [{"name": "search", "success": False}] * 3 + [{"name": "search"}]
    assert _score(*retries) == 0.62
    assert _score({"name": "rm"}) == 0.0


def test_reasons() -> None:
    result = scorer.run_sync(
        Run(input="q", output=[{"name": "search"}, {"name": "x"}, {"name": "y"}, {"name": "answer"}])
    )
    assert result.reason == (
        "Score: 0.94\nAccuracy (1.0): 2/2 expected steps matched; extra: x, y.\n"
        "Efficiency (0.83): over step budget (4 steps)."
    )
    blocked = scorer.run_sync(Run(input="q", output=[{"name": "rm"}]))
    assert blocked.reason == "Score: 0.0\nBlacklist violation: rm."


def test_item_expectation_overrides_defaults() -> None:
    item = {"steps": ["answer"], "max_steps": 10}
    assert _score({"name": "answer"}, expected_trajectory=item) == 1.0
    result = scorer.run_sync(Run(input="q", output=[{"name": "answer"}], expected_trajectory=item))
    assert result.preprocess_step_result["config"]["blacklisted_tools"] == ["rm"]  # kept from defaults


def test_nothing_configured_scores_one() -> None:
    bare = create_trajectory_scorer()
    assert bare.run_sync(input="q", output=[{"name": "anything"}]).score == 1.0
    assert bare.run_sync(input="q", output="plain text").score == 1.0


def test_nested_expectations() -> None:
    nested = create_trajectory_scorer(
        defaults={"steps": [{"name": "agent", "children": {"steps": [{"name": "a"}, {"name": "b"}]}}]}
    )
    child_run = [{"name": "agent", "step_type": "agent_run", "children": [{"name": "a"}]}]
    result = nested.run_sync(input="q", output=child_run)
    assert result.score == 0.85  # 0.7 · 1 + 0.3 · 0.5, as Mastra
    assert result.preprocess_step_result["nested"][0]["step_name"] == "agent"
    assert nested.run_sync(input="q", output=[{"name": "other"}]).score == 0.0  # level 0 and nested 0


def test_nested_blacklist_fails_everything() -> None:
    nested = create_trajectory_scorer(
        defaults={"steps": [{"name": "agent", "children": {"blacklisted_tools": ["drop"]}}]}
    )
    result = nested.run_sync(input="q", output=[{"name": "agent", "children": [{"name": "drop"}]}])
    assert result.score == 0.0
    assert result.reason == "Score: 0.0\nBlacklist violation inside: agent."


def test_weights() -> None:
    accuracy_only = create_trajectory_scorer(defaults=DEFAULTS, weights={"efficiency": 0, "blacklist": 0})
    run = Run(input="q", output=[{"name": "search"}, {"name": "x"}, {"name": "y"}, {"name": "answer"}])
    assert accuracy_only.run_sync(run).score == 1.0
    with pytest.raises(ValueError, match="unknown weight"):
        create_trajectory_scorer(weights={"speed": 1})
    with pytest.raises(ValueError, match="non-negative"):
        create_trajectory_scorer(weights={"accuracy": -1})
