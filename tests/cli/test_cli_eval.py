"""`agentevals eval` and `agentevals demo`: scorer parsing, tables, JSON, exit codes 0/1/2."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import types
import uuid
from pathlib import Path
from typing import Any

import pytest

from agentevals.cli import load_scorer, main
from agentevals.sinks import SQLiteSink

APP = """
from agentevals import create_scorer

def upper(text):
    if text == "boom":
        raise RuntimeError("target exploded")
    return text.upper()

async def shout(text):
    return text.upper() + "!"

not_a_scorer = 42
starts_with_a = create_scorer(id="starts-with-a").generate_score(
    lambda run, **_: float(run.output_text.startswith("A"))
)

def length_at_most(limit=3):
    return create_scorer(id=f"len<={limit}").generate_score(
        lambda run, **_: float(len(run.output_text) <= limit)
    )
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "cliapp.py").write_text(APP)
    rows = [
        {"input": "a", "ground_truth": "A"},
        {"input": "ab", "groundTruth": "AB"},
        {"input": "b", "ground_truth": "x"},
    ]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "cliapp", raising=False)
    return tmp_path


def _json(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    out: dict[str, object] = json.loads(capsys.readouterr().out)
    return out


def test_eval_prints_a_table_and_exits_0_when_thresholds_pass(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "eval",
            "data.jsonl",
            "--target",
            "cliapp:upper",
            "--scorer",
            "exact_match",
            "--scorer",
            'regex:{"pattern": "^A"}',
            "--threshold",
            "exact_match=0.6",
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "exact_match" in out and "0.667" in out and "2/3 (66.7%)" in out and ">= 0.6" in out
    assert "regex" in out
    assert "item 2" in out and "Expected 'x', got 'B'" in out  # the failing item is shown
    assert out.rstrip().endswith("passed")


def test_eval_exits_1_when_a_threshold_fails(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "eval",
            "data.jsonl",
            "--target",
            "cliapp:upper",
            "--scorer",
            "exact_match",
            "--threshold",
            "exact_match=0.9",
            "--json",
            "--no-progress",
        ]
    )
    summary = _json(capsys)
    assert code == 1
    assert summary["verdict"] == "below_threshold"
    assert summary["scorers"]["exact_match"]["passed"] is False  # type: ignore[index]


def test_eval_exits_1_when_items_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "boom.jsonl").write_text('{"input": "a", "ground_truth": "A"}\n{"input": "boom"}\n')
    code = main(
        ["eval", "boom.jsonl", "--target", "cliapp:upper", "--scorer", "exact_match", "--no-progress"]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "RuntimeError: target exploded" in out and out.rstrip().endswith("errored")


def test_scorer_options_factories_and_user_scorers(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "eval",
            "data.jsonl",
            "--target",
            "cliapp:shout",
            "--scorer",
            "cliapp:starts_with_a",
            "--scorer",
            'cliapp:length_at_most:{"limit": 2}',
            "--scorer",
            "levenshtein",
            "--concurrency",
            "2",
            "--repeats",
            "2",
            "--json",
            "--no-progress",
        ]
    )
    summary = _json(capsys)
    assert code == 0
    # shout gives "A!", "AB!", "B!"; levenshtein similarity to "A", "AB", "x" is 1/2, 2/3, 0
    assert summary["scores"] == {
        "starts-with-a": pytest.approx(2 / 3),
        "len<=2": pytest.approx(2 / 3),
        "levenshtein": pytest.approx((1 / 2 + 2 / 3) / 3),
    }
    assert summary["total_runs"] == 6


def test_load_scorer_resolves_prebuilt_names_and_options() -> None:
    assert load_scorer("exact-match").id == "exact_match"
    strict = load_scorer('content_similarity:{"ignore_case": false}')
    assert strict.run_sync(input="Hello", output="hello").score < 1.0
    assert load_scorer("content_similarity").run_sync(input="Hello", output="hello").score == 1.0
    judged = load_scorer('answer_relevancy:{"model": "openai/gpt-4o-mini"}')
    assert judged.id == "answer_relevancy" and judged.has_judge
    scorer = load_scorer('regex:{"pattern": "^a", "id": "starts-a"}')
    assert scorer.id == "starts-a" and scorer.run_sync(input="", output="abc").score == 1.0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval", "data.jsonl", "--target", "cliapp:upper", "--scorer", "nope"], "unknown scorer 'nope'"),
        (["eval", "data.jsonl", "--target", "cliapp:upper", "--scorer", "regex:{bad"], "not valid JSON"),
        (
            ["eval", "data.jsonl", "--target", "cliapp:upper", "--scorer", 'exact_match:{"x": 1}'],
            "takes no options",
        ),
        (
            ["eval", "data.jsonl", "--target", "cliapp:upper", "--scorer", "cliapp:not_a_scorer"],
            "neither a Scorer",
        ),
        (
            ["eval", "data.jsonl", "--target", "nomodule:x", "--scorer", "exact_match"],
            "cannot import 'nomodule'",
        ),
        (["eval", "data.jsonl", "--target", "cliapp:missing", "--scorer", "exact_match"], "no attribute"),
        (["eval", "data.jsonl", "--target", "upper", "--scorer", "exact_match"], "expected module:object"),
        (["eval", "missing.jsonl", "--target", "cliapp:upper", "--scorer", "exact_match"], "does not exist"),
        (
            ["eval", "data.jsonl", "--target", "cliapp:upper", "--scorer", "exact_match", "--threshold", "x"],
            "expected SCORER=MIN",
        ),
        (
            [
                "eval",
                "data.jsonl",
                "--target",
                "cliapp:upper",
                "--scorer",
                "exact_match",
                "--threshold",
                "y=0.5",
            ],
            "unknown scorer(s) ['y']",
        ),
        (
            [
                "eval",
                "data.jsonl",
                "--target",
                "cliapp:upper",
                "--scorer",
                "exact_match",
                "--concurrency",
                "0",
            ],
            "concurrency must be a positive integer",
        ),
    ],
)
def test_usage_errors_exit_2_with_a_message(
    project: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main([*argv, "--no-progress"]) == 2
    assert message in capsys.readouterr().err


def test_argparse_errors_and_no_command_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "data.jsonl"]) == 2  # --target and --scorer are required
    assert main([]) == 2
    assert main(["--help"]) == 0
    capsys.readouterr()


def test_eval_db_stores_eval_records(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "eval",
            "data.jsonl",
            "--target",
            "cliapp:upper",
            "--scorer",
            "exact_match",
            "--db",
            "evals.db",
            "--no-progress",
        ]
    )
    assert code == 0
    with sqlite3.connect(project / "evals.db") as conn:
        rows = conn.execute(
            "SELECT scorer_id, source, score, entity FROM agentevals_scores ORDER BY score"
        ).fetchall()
    assert rows == [
        ("exact_match", "eval", 0.0, "upper"),
        ("exact_match", "eval", 1.0, "upper"),
        ("exact_match", "eval", 1.0, "upper"),
    ]


def test_demo_delegates_to_the_langchain_integration(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    fake = types.ModuleType("agentevals_langchain.demo")

    def demo_main(argv: list[str]) -> int:
        seen.append(argv)
        return 0

    fake.main = demo_main  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "agentevals_langchain.demo", fake)
    assert main(["demo", "--items", "3", "--help"]) == 0
    assert seen == [["--items", "3", "--help"]]


def test_demo_without_the_integration_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.metadata

    real = importlib.metadata.entry_points

    def without_commands(**selection: str) -> importlib.metadata.EntryPoints:
        points = real(**selection)
        return (
            importlib.metadata.EntryPoints([]) if selection.get("group") == "agentevals.commands" else points
        )

    monkeypatch.setattr(importlib.metadata, "entry_points", without_commands)  # no integration installed
    assert main(["demo"]) == 2
    assert "pip install 'agentevals-core[langchain]'" in capsys.readouterr().err


def test_demo_of_a_broken_integration_says_how_to_reinstall(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "agentevals_langchain.demo", None)  # its import fails
    assert main(["demo"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'agentevals-core[langchain]'" in err and "agentevals_langchain.demo" in err


def test_console_script_exit_codes_end_to_end(project: Path) -> None:
    base = [
        sys.executable,
        "-m",
        "agentevals.cli",
        "eval",
        "data.jsonl",
        "--target",
        "cliapp:upper",
        "--scorer",
        "exact_match",
    ]
    ok = subprocess.run(
        [*base, "--threshold", "exact_match=0.5"], capture_output=True, text=True, cwd=project
    )
    assert ok.returncode == 0, ok.stderr
    assert "exact_match" in ok.stdout and ok.stderr == ""  # no progress bar when stderr is not a TTY
    low = subprocess.run(
        [*base, "--threshold", "exact_match=0.9"], capture_output=True, text=True, cwd=project
    )
    assert low.returncode == 1


def test_ctrl_c_prints_the_summary_of_the_items_done_and_exits_130(tmp_path: Path) -> None:
    import signal
    import subprocess
    import time

    (tmp_path / "slowapp.py").write_text(
        "import pathlib, time\n"
        "def answer(text):\n"
        "    if text == 'slow':\n"
        "        pathlib.Path('started').touch()\n"
        "        time.sleep(60)\n"
        "    return text.upper()\n"
    )
    rows = [{"input": "a", "ground_truth": "A"}, {"input": "b", "ground_truth": "B"}, {"input": "slow"}]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    command = [sys.executable, "-m", "agentevals.cli", "eval", "data.jsonl", "--target", "slowapp:answer"]
    proc = subprocess.Popen(
        [*command, "--scorer", "exact_match", "--no-progress", "--concurrency", "1"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "started").exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted after 2 of 3 runs" in err
    assert "Traceback" not in err and "Task was destroyed" not in err
    assert "exact_match" in out  # the summary table of the two items done


async def test_arun_evals_stopped_early_covers_the_items_done() -> None:
    import asyncio

    from agentevals.evals import arun_evals
    from agentevals.scorers import create_exact_match_scorer

    stop = asyncio.Event()

    async def target(text: str) -> str:
        if text == "slow":
            stop.set()
            await asyncio.sleep(60)
        return text.upper()

    data = [{"input": "a", "ground_truth": "A"}, {"input": "slow"}]
    result = await arun_evals(
        data, [create_exact_match_scorer()], target, concurrency=1, progress=False, stop=stop
    )
    assert result.interrupted and not result.passed
    assert [item.index for item in result.items] == [0] and result.summary.total_items == 2
    assert result.scores == {"exact_match": 1.0}


def test_a_judge_without_its_key_fails_before_any_item(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    scorer = 'factuality:{"model": "openai/gpt-4o-mini"}'
    code = main(["eval", "data.jsonl", "--target", "cliapp:upper", "--scorer", scorer, "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert "scorer 'factuality': judge model 'openai/gpt-4o-mini' needs OPENAI_API_KEY" in err


def test_the_table_counts_skipped_runs(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "partial.jsonl").write_text('{"input": "a", "ground_truth": "A"}\n{"input": "b"}\n')
    code = main(
        ["eval", "partial.jsonl", "--target", "cliapp:upper", "--scorer", "exact_match", "--no-progress"]
    )
    out = capsys.readouterr().out
    assert code == 0  # an item without ground truth is skipped by exact_match, not an error
    row = next(line for line in out.splitlines() if "exact_match" in line)
    assert row.split("│")[-2].strip() == "1"  # the skipped column


def _eval_argv(*extra: str) -> list[str]:
    return [
        "eval",
        "data.jsonl",
        "--target",
        "cliapp:upper",
        "--scorer",
        "exact_match",
        "--no-progress",
        *extra,
    ]


def test_eval_db_takes_the_addresses_report_reads(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_eval_argv("--db", "out.jsonl")) == 0
    lines = [json.loads(line) for line in (project / "out.jsonl").read_text().splitlines()]
    assert sorted(line["score"] for line in lines) == [0.0, 1.0, 1.0]
    capsys.readouterr()
    assert main(["report", "--db", "out.jsonl", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 3


def test_eval_db_writes_a_postgresql_url_to_postgresql(
    project: Path, postgres: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import psycopg

    table = f"agentevals_cli_eval_{uuid.uuid4().hex[:12]}"
    try:
        assert main(_eval_argv("--db", postgres.url, "--table", table)) == 0
        with psycopg.connect(postgres.url) as conn:
            scores = conn.execute(f"SELECT score FROM {table} ORDER BY score").fetchall()
        assert scores == [(0.0,), (1.0,), (1.0,)]
    finally:
        with psycopg.connect(postgres.url, autocommit=True) as conn:
            for name in (table, *(f"{table}_{s}" for s in ("runs", "schema", "rollup", "scorers", "drops"))):
                conn.execute(f"DROP TABLE IF EXISTS {name}")
    assert [p.name for p in project.iterdir() if p.name.startswith("postgres")] == []  # no stray directory


def test_sqlite_sink_refuses_a_url() -> None:
    with pytest.raises(
        ValueError, match=r"not the URL 'postgresql://ann:\*\*\*@127.0.0.1/test'.*PostgresSink"
    ):
        SQLiteSink("postgresql://ann:secret@127.0.0.1/test")
    assert SQLiteSink("scores.db").path == Path("scores.db")


PASS_RATE_DATA = [
    {"input": "a", "ground_truth": "A"},  # passes
    {"input": "b", "ground_truth": "x"},  # below the threshold
    {"input": "boom", "ground_truth": "X"},  # the target errors
    {"input": "c", "ground_truth": "C"},  # passes
]


def test_one_pass_rate_in_the_table_json_report_and_html(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "rates.jsonl").write_text("".join(json.dumps(r) + "\n" for r in PASS_RATE_DATA))
    argv = ["eval", "rates.jsonl", "--target", "cliapp:upper", "--scorer", "exact_match", "--no-progress"]
    argv += ["--threshold", "exact_match=0.5", "--db", "rates.db"]
    assert main(argv) == 1  # an earlier evaluation in the same store
    table = capsys.readouterr().out
    assert "2/4 (50.0%)" in table
    assert (
        "4 items, 4 runs: 2/4 (50.0%) runs passed; 1 errored (counted as not passed), 1 below threshold"
        in table
    )
    assert main([*argv, "--json", "--html", "report.html"]) == 1
    summary = _json(capsys)
    assert (summary["passed_runs"], summary["errored_runs"], summary["below_threshold_runs"]) == (2, 1, 1)
    assert summary["pass_rate"] == 0.5 and summary["verdict"] == "errored"
    assert summary["scorers"]["exact_match"]["pass_rate"] == 0.5  # type: ignore[index]
    assert summary["scorers"]["exact_match"]["passes"] == 2  # type: ignore[index]
    assert main(["report", "--db", "rates.db", "--json"]) == 0
    (rate,) = json.loads(capsys.readouterr().out)["pass_rates"]
    assert (rate["scores"], rate["errored"], rate["passed"], rate["rate"]) == (6, 2, 4, 0.5)
    page = (project / "report.html").read_text()
    assert 'id="store-runs">4<' in page  # this evaluation's runs, not the 8 in the store
    assert "50.0%" in page and "2/4" in page and "4 sampled / 4 seen" in page


GRAPH_APP = """
from typing import TypedDict
from langgraph.graph import StateGraph

class State(TypedDict):
    text: str

def shout(state: State) -> State:
    return {"text": state["text"].upper()}

builder = StateGraph(State)
builder.add_node("shout", shout)
builder.set_entry_point("shout")
support_graph = builder.compile()
named_graph = builder.compile(name="billing")
"""


def test_a_graph_without_a_name_is_named_by_its_target_attribute(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "graphapp.py").write_text(GRAPH_APP)
    (project / "graph.jsonl").write_text('{"input": {"text": "a"}}\n')
    for target in ("graphapp:support_graph", "graphapp:named_graph"):
        argv = ["eval", "graph.jsonl", "--target", target, "--scorer", "check_used_no_tools"]
        assert main([*argv, "--db", "graph.db", "--no-progress"]) == 0
    capsys.readouterr()
    with sqlite3.connect(project / "graph.db") as conn:
        entities = {row[0] for row in conn.execute("SELECT entity FROM agentevals_scores")}
    assert entities == {"support_graph", "billing"}
