"""``agentevals labels import`` and ``labels export``: CSV and JSON Lines into and out of a store, all
or nothing, every bad line named; SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import io
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentevals._store._row import tables
from agentevals._store._schema_check import store_tables
from agentevals.cli import main
from agentevals.evals import Labels
from agentevals.sinks._open import sink_for

GOOD_CSV = (
    "run_id,name,value,labeller,note\nr1,helpfulness,pass,ann,fine\nr2,helpfulness,0.4,,\nr3,tone,fail,bob,\n"
)


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[str, str]]:
    """``(address, table)`` of a new, empty store on SQLite or on PostgreSQL (dropped afterwards)."""
    table = f"agentevals_cli_{uuid.uuid4().hex[:10]}"
    address = (
        str(tmp_path / "store.db") if request.param == "sqlite" else request.getfixturevalue("postgres").url
    )
    sink = sink_for(address, table=table)
    sink.check()
    await sink.close()
    yield address, table
    if request.param == "postgres":
        import psycopg

        async with await psycopg.AsyncConnection.connect(address, autocommit=True) as conn:
            for name in store_tables(tables(table)):
                await conn.execute(f"DROP TABLE IF EXISTS {name} CASCADE")
            for name in ("rollup", "bins"):
                for event in ("insert", "update", "delete"):
                    await conn.execute(f"DROP FUNCTION IF EXISTS {table}_{name}_{event}()")


def _stored(address: str, table: str) -> list[tuple[str, str, float, str, str, str | None]]:
    with Labels(address, table=table) as labels:
        return [(x.run_id, x.name, x.value, x.kind, x.labeller, x.note) for x in labels.list()]


def test_a_csv_file_is_imported(
    store: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address, table = store
    (tmp_path / "labels.csv").write_text(GOOD_CSV)
    args = ["labels", "import", str(tmp_path / "labels.csv"), "--db", address, "--table", table]
    assert main([*args, "--labeller", "team"]) == 0
    assert "imported 3 labels into" in capsys.readouterr().out
    assert sorted(_stored(address, table)) == [
        ("r1", "helpfulness", 1.0, "pass_fail", "ann", "fine"),
        ("r2", "helpfulness", 0.4, "score", "team", None),
        ("r3", "tone", 0.0, "pass_fail", "bob", None),
    ]
    assert main(args) == 0  # imported again: labels are added, never replaced
    assert len(_stored(address, table)) == 6


def test_a_file_with_a_bad_line_imports_nothing(
    store: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address, table = store
    lines = [
        {"run_id": "r1", "name": "helpfulness", "value": "pass"},
        {"run_id": "r2", "name": "helpfulness", "value": "maybe"},
        {"run_id": "r3", "name": "helpfulness", "value": 0.5},
        {"run_id": "", "name": "helpfulness", "value": 1},
    ]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["labels", "import", str(path), "--db", address, "--table", table]) == 2
    err = capsys.readouterr().err
    assert f"{path}:2: value is 'maybe': write pass, fail, true, false or a number from 0 to 1" in err
    assert f"{path}:4: run_id is empty: give the id of a stored run" in err
    assert "agentevals labels import: error: 2 bad line(s) in" in err and "nothing imported" in err
    assert _stored(address, table) == []


async def test_labels_are_exported_and_import_into_another_store(
    store: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address, table = store
    (tmp_path / "labels.csv").write_text(GOOD_CSV)
    assert main(["labels", "import", str(tmp_path / "labels.csv"), "--db", address, "--table", table]) == 0
    capsys.readouterr()
    assert main(["labels", "export", "--db", address, "--table", table]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "label_id,run_id,name,value,kind,labeller,note,created_at"
    assert [line.split(",")[1:6] for line in printed[1:]] == [
        ["r1", "helpfulness", "pass", "pass_fail", "ann"],
        ["r2", "helpfulness", "0.4", "score", ""],
        ["r3", "tone", "fail", "pass_fail", "bob"],
    ]
    out = tmp_path / "labels.jsonl"
    assert main(["labels", "export", "--db", address, "--table", table, "--out", str(out)]) == 0
    assert "exported 3 labels to" in capsys.readouterr().err
    assert [json.loads(line)["value"] for line in out.read_text().splitlines()] == ["pass", 0.4, "fail"]
    other = tmp_path / "other.db"
    sink = sink_for(other)
    sink.check()
    await sink.close()
    assert main(["labels", "import", str(out), "--db", str(other)]) == 0
    assert _stored(str(other), "agentevals_scores") == _stored(address, table)


def test_a_csv_export_escapes_the_cells_a_spreadsheet_would_run(
    store: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address, table = store
    with Labels(address, table=table) as labels:
        labels.add("-r1", "helpfulness", "pass", labeller="@ann", note='=HYPERLINK("http://x")')
    export = ["labels", "export", "--db", address, "--table", table]
    assert main(export) == 0
    [row] = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert (row["run_id"], row["labeller"], row["note"]) == ("'-r1", "'@ann", '\'=HYPERLINK("http://x")')
    assert main([*export, "--no-csv-escape"]) == 0
    [row] = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert (row["run_id"], row["labeller"], row["note"]) == ("-r1", "@ann", '=HYPERLINK("http://x")')
    out = tmp_path / "labels.jsonl"
    assert main([*export, "--out", str(out)]) == 0  # JSON Lines are data, never run: written as stored
    assert json.loads(out.read_text())["note"] == '=HYPERLINK("http://x")'


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "labels.csv").write_text(GOOD_CSV)
    (tmp_path / "labels.txt").write_text(GOOD_CSV)
    (tmp_path / "scores.jsonl").write_text("")
    labels = str(tmp_path / "labels.csv")
    assert main(["labels"]) == 2
    assert main(["labels", "import", str(tmp_path / "none.csv"), "--db", str(tmp_path / "s.db")]) == 2
    assert "No such file" in capsys.readouterr().err
    assert main(["labels", "import", str(tmp_path / "labels.txt"), "--db", str(tmp_path / "s.db")]) == 2
    assert "expected a .csv or .jsonl file of labels" in capsys.readouterr().err
    assert main(["labels", "import", labels, "--db", str(tmp_path / "missing.db")]) == 2
    assert "--db: no agentevals store at" in capsys.readouterr().err
    assert main(["labels", "import", labels, "--db", str(tmp_path / "scores.jsonl")]) == 2
    assert "keeps score records only" in capsys.readouterr().err
    assert main(["labels", "export", "--db", str(tmp_path / "s.db"), "--out", str(tmp_path / "x.txt")]) == 2
    err = capsys.readouterr().err
    assert "--out:" in err and "expected a .csv or .jsonl file" in err and "or pass --format" in err
