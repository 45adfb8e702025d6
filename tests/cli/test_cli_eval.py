"""`agentevals eval` and `agentevals demo`: scorer parsing, tables, JSON, exit codes 0/1/2."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import types
from pathlib import Path

import pytest

from agentevals.cli import load_scorer, main

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
    assert "exact_match" in out and "0.667" in out and "67%" in out and ">= 0.6" in out
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
