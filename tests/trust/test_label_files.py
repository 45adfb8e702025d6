"""Labels files: CSV and JSON Lines read into labels, every bad line named with its number and the fix,
and written back so that an export imports again."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest

from agentevals._trust._label_files import LabelFileError, file_format, parse_labels, write_labels
from agentevals.evals import Label


def _csv(text: str, labeller: str | None = None) -> list[Label]:
    return parse_labels(io.StringIO(text), "csv", name="labels.csv", labeller=labeller)


def _jsonl(lines: list[object]) -> list[Label]:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    return parse_labels(io.StringIO(text), "jsonl", name="labels.jsonl")


def test_a_csv_file_gives_one_label_per_line() -> None:
    labels = _csv(
        "run_id,name,value,labeller,note\n"
        'r1,helpfulness,pass,ann,"clear, complete"\n'
        "r2,helpfulness,0.3,,\n"
        "r3,helpful, FALSE ,bob,\n",
        labeller="team",
    )
    assert [(x.run_id, x.name, x.value, x.kind, x.labeller, x.note) for x in labels] == [
        ("r1", "helpfulness", 1.0, "pass_fail", "ann", "clear, complete"),
        ("r2", "helpfulness", 0.3, "score", "team", None),  # --labeller fills a line without one
        ("r3", "helpful", 0.0, "pass_fail", "bob", None),
    ]


def test_a_jsonl_file_gives_one_label_per_object() -> None:
    labels = _jsonl(
        [
            {"run_id": "r1", "name": "helpfulness", "value": True, "labeller": "ann"},
            "",
            {"run_id": "r2", "name": "helpfulness", "value": 0.75, "note": "mostly right"},
            {"run_id": "r3", "name": "helpfulness", "value": "fail"},
        ]
    )
    assert [(x.run_id, x.value, x.kind, x.note) for x in labels] == [
        ("r1", 1.0, "pass_fail", None),
        ("r2", 0.75, "score", "mostly right"),
        ("r3", 0.0, "pass_fail", None),
    ]


def test_every_bad_line_is_named_with_its_number_and_the_fix() -> None:
    with pytest.raises(LabelFileError) as found:
        _csv(
            "run_id,name,value\n"
            "r1,helpfulness,pass\n"
            ",helpfulness,pass\n"
            "r3,,0.5\n"
            "r4,helpfulness,yes\n"
            "r5,helpfulness,1.5\n"
            "r6,helpfulness,0.5,extra\n"
        )
    assert found.value.problems == [
        "labels.csv:3: run_id is empty: give the id of a stored run",
        "labels.csv:4: name is empty: give a scorer id (e.g. helpfulness) or a label name",
        "labels.csv:5: value is 'yes': write pass, fail, true, false or a number from 0 to 1",
        "labels.csv:6: value is '1.5': write pass, fail, true, false or a number from 0 to 1",
        "labels.csv:7: more cells than columns: quote a cell that holds a comma",
    ]


def test_bad_jsonl_lines_are_named() -> None:
    with pytest.raises(LabelFileError) as found:
        _jsonl(
            [
                "{not json",
                [1, 2],
                {"run_id": 7, "name": "helpfulness", "value": 1},
                {"run_id": "r4", "name": "helpfulness"},
                {"run_id": "r5", "name": "helpfulness", "value": 1, "score": 0.3},
            ]
        )
    problems = found.value.problems
    assert problems[0].startswith("labels.jsonl:1: not JSON (")
    assert problems[0].endswith("): write one JSON object per line")
    assert problems[1:] == [
        "labels.jsonl:2: not a JSON object: write one object per line",
        "labels.jsonl:3: run_id is 7: give the id of a stored run",
        "labels.jsonl:4: value is missing: write pass, fail, true, false or a number from 0 to 1",
        "labels.jsonl:5: unknown field(s) score: use run_id, name, value, labeller and note",
    ]


def test_a_header_without_the_fields_is_named() -> None:
    with pytest.raises(LabelFileError, match=r"labels\.csv:1: no value column; unknown column\(s\) verdict"):
        _csv("run_id,name,verdict\nr1,helpfulness,pass\n")


def test_many_bad_lines_keep_the_message_short_but_all_in_problems() -> None:
    with pytest.raises(LabelFileError) as found:
        _csv("run_id,name,value\n" + "r,helpfulness,maybe\n" * 25)
    assert len(found.value.problems) == 25
    assert str(found.value).splitlines()[-1] == "... and 5 more"


def test_the_format_comes_from_the_extension() -> None:
    assert (file_format("a.CSV"), file_format("a.jsonl"), file_format("a.ndjson")) == (
        "csv",
        "jsonl",
        "jsonl",
    )
    with pytest.raises(ValueError, match=r"expected a \.csv or \.jsonl file"):
        file_format("labels.txt")


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_an_export_imports_again(kind: str) -> None:
    moment = datetime(2026, 3, 1, tzinfo=UTC)
    labels = [
        Label("a" * 32, "r1", "helpfulness", 1.0, "pass_fail", "ann", "good, short", moment),
        Label("b" * 32, "r2", "helpfulness", 0.25, "score", "", None, moment),
        Label("c" * 32, "r3", "tone", 1.0, "score", "bob", None, moment),
    ]
    out = io.StringIO()
    assert write_labels(labels, out, kind) == 3  # type: ignore[arg-type]
    back = parse_labels(io.StringIO(out.getvalue()), kind, name="export")  # type: ignore[arg-type]
    fields = [(x.run_id, x.name, x.value, x.kind, x.labeller, x.note) for x in back]
    assert fields == [(x.run_id, x.name, x.value, x.kind, x.labeller, x.note) for x in labels]
    assert all(b.label_id != x.label_id for b, x in zip(back, labels, strict=True))  # new labels
