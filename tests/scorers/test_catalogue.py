"""One naming rule: ``create_<measure>_scorer`` factories, ids equal to the measure, the CLI resolves them."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import agentevals.scorers
import agentevals.scorers.llm
from agentevals import Scorer
from agentevals.cli import UsageError, load_scorer, main
from agentevals.scorers._catalogue import SCORERS, scorer_id

MODEL = "openai/gpt-4o-mini"

# The options a factory needs to build a scorer; every id in the catalogue must be listed.
REQUIRED_OPTIONS: dict[str, dict[str, Any]] = {
    "regex": {"pattern": "^a"},
    "tool_call_accuracy_code": {"expected_tool": "search"},
    "trajectory_accuracy_code": {"expected_trajectory": ["search"]},
    "check_includes": {"expected": "x"},
    "check_excludes": {"unwanted": "x"},
    "check_equals": {"expected": "x"},
    "check_matches": {"pattern": "x"},
    "check_similarity": {"expected": "x"},
    "check_called_tool": {"tool_name": "search"},
    "check_did_not_call": {"tool_name": "search"},
    "check_tool_order": {"order": ["search"]},
    "check_max_tool_calls": {"max": 1},
    "tool_call_accuracy_llm": {"model": MODEL, "available_tools": [{"name": "search"}]},
    "noise_sensitivity": {"model": MODEL, "baseline_response": "x", "noisy_query": "y"},
    "rubric": {"model": MODEL, "criteria": ["Polite"]},
    "multi_turn_judge": {"model": MODEL, "criterion": "Stays on topic"},
}


def _options(id: str) -> dict[str, Any]:
    if id in REQUIRED_OPTIONS:
        return REQUIRED_OPTIONS[id]
    factory = SCORERS[id]
    return {"model": MODEL} if "model" in inspect.signature(factory).parameters else {}


def test_every_factory_follows_the_naming_rule() -> None:
    exported = {n for n in agentevals.scorers.__all__ if n.startswith("create_")}
    assert exported == {f.__name__ for id, f in SCORERS.items() if not id.startswith("check_")}
    for name in exported:
        assert name.endswith("_scorer") or name.endswith(("_scorer_code", "_scorer_llm")), name
    suffixed = {
        n.removesuffix("_code").removesuffix("_llm") for n in exported if n.endswith(("_code", "_llm"))
    }
    assert suffixed == {"create_tool_call_accuracy_scorer", "create_trajectory_accuracy_scorer"}
    for name in suffixed:  # a suffix only where the measure exists both ways
        assert f"{name}_code" in exported and f"{name}_llm" in exported


@pytest.mark.parametrize("id", list(SCORERS))
def test_the_cli_accepts_every_id_and_the_scorer_carries_it(id: str) -> None:
    options = _options(id)
    spec = id if not options else f"{id}:{__import__('json').dumps(options)}"
    scorer = load_scorer(spec)
    assert isinstance(scorer, Scorer) and scorer.id == id
    assert id == id.lower() and "-" not in id


def test_ids_are_the_measure_of_the_factory_name() -> None:
    assert scorer_id("create_exact_match_scorer") == "exact_match"
    assert scorer_id("create_trajectory_accuracy_scorer_code") == "trajectory_accuracy_code"
    assert scorer_id("exact_match") is None


def test_an_unknown_cli_name_lists_the_valid_ids() -> None:
    with pytest.raises(UsageError) as caught:
        load_scorer("nope")
    for id in ("exact_match", "answer_relevancy", "check_includes", "trajectory_accuracy_code"):
        assert id in str(caught.value)


@pytest.mark.parametrize(("name", "id"), [("create_exact_match_scorer", "exact_match"), ("regx", "regex")])
def test_a_factory_name_or_a_typo_suggests_the_id(name: str, id: str) -> None:
    with pytest.raises(UsageError, match=f"unknown scorer '{name}'; did you mean '{id}'"):
        load_scorer(name)


def test_threshold_takes_an_id(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text('{"input": "a", "ground_truth": "a"}\n')
    (tmp_path / "catalogue_target.py").write_text("def same(text):\n    return text\n")
    code = main(
        [
            "eval",
            str(data),
            "--target",
            f"{tmp_path / 'catalogue_target.py'}:same",
            "--scorer",
            "levenshtein",
            "--threshold",
            "levenshtein=0.9",
            "--no-progress",
            "--json",
        ]
    )
    assert code == 0, capsys.readouterr()


def test_dir_lists_only_the_new_names() -> None:
    public = {n for n in dir(agentevals.scorers) if not n.startswith("_")}
    assert public == set(agentevals.scorers.__all__) | {"code", "llm", "trajectory", "utils"}
    old = {"exact_match", "includes", "levenshtein", "json_match", "regex", "factuality"}
    old |= {"create_trajectory_scorer_code", "create_context_relevance_scorer_llm"}
    assert not old & public
    llm_public = {n for n in dir(agentevals.scorers.llm) if not n.startswith("_")}
    assert llm_public == set(agentevals.scorers.llm.__all__)
