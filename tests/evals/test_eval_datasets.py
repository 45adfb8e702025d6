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


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("data.jsonl", '{"input": "a"}\n\n{"question": "b", "answer": "B"}\n', "at {path}:3"),
        ("data.csv", "input,question\na,\n,b\n", "at {path}:3"),
        ("data.yaml", "- input: a\n- question: b\n  answer: B\n", "2 of {path}"),
        ("data.json", '[{"input": "a"}, {"question": "b", "answer": "B"}]', "2 of {path}"),
    ],
)
def test_an_item_error_names_the_file_the_line_and_the_keys_found(
    tmp_path: Path, name: str, text: str, where: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError) as raised:
        load_items(path)
    message = str(raised.value)
    assert message.startswith(f"Invalid data item {where.format(path=path)}: must have an 'input' key")
    found = "['question']" if name == "data.csv" else "['answer', 'question']"
    assert message.endswith(f"keys found: {found}")


def test_an_unknown_key_is_named_with_the_keys_found(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text('{"input": "a", "expected": "A"}\n')
    with pytest.raises(
        ValueError,
        match=rf"at {path}:1: unknown key\(s\) \['expected'\].*keys found: \['expected', 'input'\]",
    ):
        load_items(path)
    with pytest.raises(ValueError, match=r"Invalid data item at index 0: .*keys found: \['question'\]"):
        load_items([{"question": "b"}])
