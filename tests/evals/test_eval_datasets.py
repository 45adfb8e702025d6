"""Datasets from files: JSONL, JSON, CSV and YAML, with camelCase keys and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentevals import run_evals
from agentevals.evals import EvalItem, load_items
from agentevals.scorers import create_exact_match_scorer

ROWS = [
    {"input": "a", "groundTruth": "A", "requestContext": {"user": "u1"}},
    {"input": "b", "ground_truth": "B", "metadata": {"tag": "x"}},
]


def _check(items: list[EvalItem]) -> None:
    assert [(i.index, i.input, i.ground_truth) for i in items] == [(0, "a", "A"), (1, "b", "B")]
    assert items[0].request_context == {"user": "u1"} and items[1].metadata == {"tag": "x"}


def test_jsonl_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n\n" + json.dumps(ROWS[1]) + "\n")
    _check(load_items(path))


def test_json_list_or_items_mapping(tmp_path: Path) -> None:
    (tmp_path / "list.json").write_text(json.dumps(ROWS))
    (tmp_path / "mapping.json").write_text(json.dumps({"items": ROWS}))
    _check(load_items(tmp_path / "list.json"))
    _check(load_items(str(tmp_path / "mapping.json")))


def test_csv_parses_json_cells_and_drops_empty_ones(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text(
        'input,groundTruth,requestContext,metadata\na,A,"{""user"": ""u1""}",\nb,B,,"{""tag"": ""x""}"\n'
    )
    _check(load_items(path))


def test_yaml(tmp_path: Path) -> None:
    path = tmp_path / "data.yaml"
    path.write_text(
        "- input: a\n  groundTruth: A\n  requestContext: {user: u1}\n"
        "- input: b\n  ground_truth: B\n  metadata: {tag: x}\n"
    )
    _check(load_items(path))


def test_run_evals_accepts_a_path(tmp_path: Path) -> None:
    path = tmp_path / "data.yml"
    path.write_text("items:\n  - {input: a, ground_truth: A}\n  - {input: b, ground_truth: c}\n")
    assert run_evals(path, [create_exact_match_scorer()], str.upper, progress=False).scores == {
        "exact_match": 0.5
    }


def test_file_errors_name_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        load_items(tmp_path / "missing.jsonl")
    (tmp_path / "bad.jsonl").write_text('{"input": "a"}\n{"input": \n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: invalid JSON"):
        load_items(tmp_path / "bad.jsonl")
    (tmp_path / "data.txt").write_text("a")
    with pytest.raises(ValueError, match=r"unsupported dataset format '\.txt'"):
        load_items(tmp_path / "data.txt")
    (tmp_path / "empty.yaml").write_text("")
    with pytest.raises(ValueError, match="data is empty"):
        load_items(tmp_path / "empty.yaml")
    with pytest.raises(ValueError, match="'request_context' must be a mapping"):
        load_items([{"input": "a", "request_context": "nope"}])
