"""``agentevals report`` with people's labels: an agreement section per labelled scorer (text, ``--json``,
``--html``), the corrected pass rate beside the raw one; a report without labels is byte for byte the
report this release printed before labels existed (``golden/``). SQLite and PostgreSQL."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from report_store import JUDGE_SCORES, write_store

from agentevals._evals._report import build_report
from agentevals._store._row import tables
from agentevals._store._schema_check import store_tables
from agentevals._trust._stats import Confusion, corrected_pass_rate
from agentevals.cli import main
from agentevals.evals import Labels
from agentevals.sinks import SQLiteSink
from agentevals.sinks._open import sink_for

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[str, str]]:
    """``(address, table)`` of the report store (``report_store``) on SQLite or on PostgreSQL."""
    table = f"agentevals_rep_{uuid.uuid4().hex[:10]}"
    address = (
        str(tmp_path / "store.db") if request.param == "sqlite" else request.getfixturevalue("postgres").url
    )
    await write_store(sink_for(address, table=table))
    yield address, table
    if request.param == "postgres":
        import psycopg

        async with await psycopg.AsyncConnection.connect(address, autocommit=True) as conn:
            for name in store_tables(tables(table)):
                await conn.execute(f"DROP TABLE IF EXISTS {name} CASCADE")
            for name in ("rollup", "bins"):
                for event in ("insert", "update", "delete"):
                    await conn.execute(f"DROP FUNCTION IF EXISTS {table}_{name}_{event}()")


def _label_as_the_judge_did(address: str, table: str, *, flip: int | None = None) -> None:
    """A person's pass/fail label of every ``helpfulness`` run, agreeing with the judge but on run
    ``flip``; a label of a run that errored; and a label of another name."""
    with Labels(address, table=table) as labels:
        for n, score in enumerate(JUDGE_SCORES):
            passed = (score >= 0.5) != (n == flip)
            labels.add(f"r{n}", "helpfulness", "pass" if passed else "fail", labeller="ann")
        labels.add(f"r{len(JUDGE_SCORES)}", "helpfulness", "fail", labeller="ann")
        labels.add("r0", "helpful", True)


def _report(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["report", *args]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(
    ("golden", "options"),
    [
        ("report.txt", []),
        ("report.json", ["--json"]),
        ("report_pass_threshold.txt", ["--pass-threshold", "exact_match=0.5"]),
    ],
)
async def test_a_report_without_labels_of_its_scorers_is_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], golden: str, options: list[str]
) -> None:
    db = tmp_path / "store.db"
    await write_store(SQLiteSink(db))
    with Labels(db) as labels:
        labels.add("r0", "helpful", "pass")  # a free name: no scorer of the report
    printed = _report(["--db", str(db), *options], capsys)
    assert printed.replace(str(db), "STORE") == (GOLDEN / golden).read_text()


def test_the_report_shows_agreement_and_the_corrected_pass_rate(
    store: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    address, table = store
    _label_as_the_judge_did(address, table)
    printed = _report(["--db", address, "--table", table, "--min-labels", "3"], capsys)
    title = "agreement with people: helpfulness (pass: score >= 0.5, stored; 12 labels, 1 without a scored"
    assert title in printed
    # The judge agrees with every label: the corrected rate is its own 7 of 11, with a wider interval.
    corrected = corrected_pass_rate(7, 11, Confusion(tp=7, tn=4), min_per_class=3).estimate
    assert corrected is not None and corrected.value == pytest.approx(7 / 11)
    assert f"{corrected} (v2)" in printed
    assert "7/11 0.636 [0.354, 0.848]" in printed
    assert "disagreements" not in printed
    default = _report(["--db", address, "--table", table], capsys)
    assert "too few labels (7 passing, 4 failing; 30 of each needed) (v2)" in default
    stricter = _report(["--db", address, "--table", table, "--pass-threshold", "helpfulness=0.8"], capsys)
    assert "agreement with people: helpfulness (pass: score >= 0.8, --pass-threshold;" in stricter


def test_the_worst_disagreements_are_listed(
    store: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    address, table = store
    _label_as_the_judge_did(address, table, flip=5)  # the judge gave r5 0.95; a person failed it
    printed = _report(["--db", address, "--table", table], capsys)
    assert "helpfulness: disagreements, worst first (1 of 1)" in printed
    assert "│ v2      │ r5  │ ann      │ 0.950 │  fail │ 0.950 │" in printed


def test_the_json_report_holds_the_agreement(
    store: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    address, table = store
    _label_as_the_judge_did(address, table, flip=2)
    data = json.loads(_report(["--db", address, "--table", table, "--json", "--min-labels", "4"], capsys))
    (found,) = data["agreement"]
    assert {
        k: found[k]
        for k in ("scorer", "threshold", "threshold_origin", "min_per_class", "labels", "unmatched")
    } == {
        "scorer": "helpfulness",
        "threshold": {"min": 0.5, "max": None},
        "threshold_origin": "stored",
        "min_per_class": 4,
        "labels": 12,
        "unmatched": 1,
    }
    (v2,) = found["versions"]
    assert v2["version"] == "v2" and v2["confusion"] == {"tp": 7, "fn": 1, "fp": 0, "tn": 3}
    assert v2["raw"]["scored"] == 11 and v2["raw"]["passed"] == 7 and v2["raw"]["errored"] == 1
    assert v2["disagreements"] == [
        {"run_id": "r2", "score": 0.2, "label": 1.0, "kind": "pass_fail", "labeller": "ann", "gap": 0.8}
    ]
    assert set(v2["corrected"]) == {"raw", "estimate", "refused"}
    assert set(v2) >= {"accuracy", "tpr", "tnr", "kappa", "numeric", "labels_pass_rate", "disagreements"}


def test_build_report_lists_ten_disagreements_per_version(tmp_path: Path) -> None:
    import asyncio

    db = tmp_path / "store.db"
    asyncio.run(write_store(SQLiteSink(db), scores=[0.9] * 15))
    with Labels(db) as labels:
        for n in range(15):
            labels.add(f"r{n}", "helpfulness", "fail", labeller="ann")
    report = build_report(db)
    (found,) = report.agreement
    (v2,) = found.versions
    assert (v2.confusion.fp, len(v2.disagreements)) == (15, 10)


def test_the_html_report_has_an_agreement_section_only_with_labels(
    store: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address, table = store
    plain = tmp_path / "plain.html"
    _report(["--db", address, "--table", table, "--html", str(plain)], capsys)
    assert "Agreement with people" not in plain.read_text()
    _label_as_the_judge_did(address, table, flip=5)
    labelled = tmp_path / "labelled.html"
    _report(["--db", address, "--table", table, "--html", str(labelled), "--min-labels", "3"], capsys)
    page = labelled.read_text()
    assert "<h2>Agreement with people</h2>" in page and 'id="agreement-helpfulness"' in page
    assert 'href="http://127.0.0.1:8765/runs/r5"' in page  # the disagreement, linked to the viewer
    assert "6 / 0 / 1 / 4" in page  # tp / fn / fp / tn
