"""What the command line tells its user: ``--version``, "did you mean" for scorers and options,
``--judge MODEL`` for LLM-judged scorers, a quiet end when the reader of a pipe leaves, and a pytest
configuration whose ``--co -q`` prints a total."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from agentevals import Run, ScoringEngine
from agentevals.cli import main
from agentevals.engine import QueueOptions
from agentevals.scorers import create_exact_match_scorer
from agentevals.sinks import SQLiteSink

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "data.jsonl").write_text('{"input": "a", "ground_truth": "A"}\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"agentevals {version('agentevals-core')}"


def test_an_unknown_scorer_id_gets_the_close_ones(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eval", "data.jsonl", "--target", "builtins:str", "--scorer", "exact_mach", "--no-progress"]
    assert main(argv) == 2
    assert "unknown scorer 'exact_mach'; did you mean 'exact_match'?" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["eval", "data.jsonl", "--target", "m:f", "--scorer", "x", "--treshold", "x=1"], "--threshold"),
        (["export", "--db", "x.db", "--formt=csv"], "--format"),
        (["report", "--wrost", "3"], "--worst"),
    ],
)
def test_an_unknown_option_gets_the_close_ones(
    project: Path, capsys: pytest.CaptureFixture[str], argv: list[str], hint: str
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: " in err and f"(did you mean {hint}?)" in err


def test_a_judged_scorer_without_a_model_names_judge_and_the_options_form(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", "data.jsonl", "--target", "builtins:str", "--scorer", "answer_relevancy", "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "'answer_relevancy' is an LLM judge and needs a model: add --judge MODEL" in err
    assert 'answer_relevancy:{"model": "openai/gpt-4o-mini"}' in err
    assert "Traceback" not in err and "TypeError" not in err


def test_judge_gives_the_model_to_judged_scorers_in_eval_and_rescore(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the key check names the model --judge gave
    base = ["--scorer", "answer_relevancy", "--scorer", "exact_match", "--judge", "openai/gpt-4o-mini"]
    assert main(["eval", "data.jsonl", "--target", "builtins:str", *base, "--no-progress"]) == 2
    assert "judge model 'openai/gpt-4o-mini' needs OPENAI_API_KEY" in capsys.readouterr().err
    SQLiteSink(project / "s.db").check()
    assert main(["rescore", "--db", "s.db", *base, "--no-progress"]) == 2
    assert "judge model 'openai/gpt-4o-mini' needs OPENAI_API_KEY" in capsys.readouterr().err


def test_judge_fills_in_only_the_model_the_options_leave_out() -> None:
    from agentevals.cli import load_scorer

    given = load_scorer('factuality:{"model": "anthropic/claude-3-5-haiku-latest"}', judge="openai/gpt-4o")
    assert given.judge is not None and given.judge.model == "anthropic/claude-3-5-haiku-latest"
    filled = load_scorer("factuality", judge="openai/gpt-4o")
    assert filled.judge is not None and filled.judge.model == "openai/gpt-4o"
    assert load_scorer("exact_match", judge="openai/gpt-4o").judge is None  # no judge to give it to


def test_export_into_a_closed_pipe_ends_quietly(project: Path) -> None:
    sink = SQLiteSink(project / "s.db")
    engine = ScoringEngine([create_exact_match_scorer()], sinks=[sink], queue=QueueOptions(linger=0))
    for i in range(3000):
        engine.submit(Run(run_id=f"run-{i}", input="q" * 100, output="a" * 100, ground_truth="a" * 100))
    assert engine.shutdown(timeout=60)
    export = [sys.executable, "-m", "agentevals.cli", "export", "--db", "s.db"]
    shell = f"{' '.join(export)} | head -n 2 >/dev/null; echo ${{PIPESTATUS[0]}} >&2"
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, cwd=project, timeout=120)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert "Exception ignored" not in done.stderr, done.stderr
    assert done.stderr.strip() == "141"  # 128 + SIGPIPE, as a program the shell ends by SIGPIPE


def test_pytest_collect_only_quiet_prints_a_total() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--co",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/cli/test_cli_helps.py",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "tests collected" in done.stdout.splitlines()[-1]
