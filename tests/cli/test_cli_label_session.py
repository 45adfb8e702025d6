"""``agentevals label`` through a pseudo-terminal: the session shows one run at a time with the judge's
score, reason and threshold, takes single keys, stores each label as its key is pressed, resumes
where the labeller stopped, and keeps the labels on quit and on Ctrl-C."""

from __future__ import annotations

import os
import pty
import re
import select
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentevals import ScoreResult
from agentevals.evals import Labels
from agentevals.sinks import SQLiteSink

ANSI = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Za-z]|[=>78])")
KEYS = "[p] pass  [f] fail  [s] score 0..1  [n] note  [k] skip  [q] quit"
#: Seconds to wait for the screen to show a text before the test fails showing the screen.
PATIENCE = 60.0
#: Runs and the judge's scores: with the threshold 0.5, nearest first they are r2, r3, r1, r4.
SCORES = {"r1": 0.1, "r2": 0.45, "r3": 0.55, "r4": 0.95}


class Terminal:
    """``agentevals`` run in a pseudo-terminal: keys typed into it, its screen read back as text."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "COLUMNS": "100", "LINES": "50", "TERM": "xterm-256color"}
        env.pop("NO_COLOR", None)
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the pseudo-terminal is its controlling terminal
            os.execve(sys.executable, [sys.executable, "-m", "agentevals.cli", *args], env)
        self.screen = ""

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def wait_for(self, *texts: str) -> str:
        """The screen (since the last clear) once it shows each of ``texts``."""
        deadline = time.monotonic() + PATIENCE
        while not all(text in self.current() for text in texts):
            if time.monotonic() > deadline or not self._read(deadline - time.monotonic()):
                raise AssertionError(f"the screen never showed {texts!r}; it shows:\n{self.current()}")
        return self.current()

    def wait_for_run(self, header: str) -> str:
        """The screen once it shows a whole run, its header starting with ``header``."""
        return self.wait_for(header, KEYS)

    def current(self) -> str:
        return ANSI.sub("", self.screen.rpartition("\x1b[2J")[2]).replace("\r", "")

    def exit_code(self) -> int:
        while self._read(PATIENCE):
            pass
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not ready:
            return False
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # the child exited and closed the terminal
            return False
        self.screen += chunk.decode("utf-8", "replace")
        return bool(chunk)

    def close(self) -> None:
        os.close(self.fd)


@pytest.fixture
async def db(tmp_path: Path) -> str:
    path = tmp_path / "scores.db"
    sink = SQLiteSink(path)
    await sink.write(
        [
            ScoreResult(
                scorer_id="helpfulness",
                scorer_name="helpfulness",
                scorer_version="v7",
                run_id=run_id,
                input=f"What is the answer to question {run_id}?",
                output=f"The answer to {run_id} is [bold]{score}[/bold]",
                score=score,
                reason=f"the judge's reason for {run_id}",
                source="live",
            )
            for run_id, score in SCORES.items()
        ]
    )
    await sink.close()
    return str(path)


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    opened: list[Terminal] = []
    yield opened
    for terminal in opened:
        terminal.close()


def _session(terminals: list[Terminal], db: str, *options: str) -> Terminal:
    terminal = Terminal("label", "--db", db, "--scorer", "helpfulness", "--labeller", "ann", *options)
    terminals.append(terminal)
    return terminal


def _labels(db: str) -> list[tuple[str, float, str, str, str | None]]:
    with Labels(db) as labels:
        return [(x.run_id, x.value, x.kind, x.labeller, x.note) for x in labels.list(name="helpfulness")]


def test_keys_label_the_runs_nearest_the_threshold_first(db: str, terminals: list[Terminal]) -> None:
    terminal = _session(terminals, db)
    screen = terminal.wait_for_run("run 1 of 4 · helpfulness · labeller ann · 0 labelled, 0 skipped")
    assert "run r2" in screen and "What is the answer to question r2?" in screen
    assert "The answer to r2 is [bold]0.45[/bold]" in screen  # stored text, not rich markup
    assert "score 0.450 (threshold >= 0.5: fail)" in screen and "version v7" in screen
    assert "reason: the judge's reason for r2" in screen
    terminal.type("p")
    assert "run r3" in terminal.wait_for_run("run 2 of 4 · helpfulness · labeller ann · 1 labelled")
    terminal.type("n")
    terminal.wait_for("note (")
    terminal.type("misses the point\r")
    terminal.wait_for("note for this label: misses the point")
    terminal.type("f")
    assert "run r1" in terminal.wait_for_run("run 3 of 4")
    terminal.type("s")
    terminal.wait_for("score from 0 to 1")
    terminal.type("2\r")  # out of range: asked again
    terminal.wait_for("'2' is not a number from 0 to 1")
    terminal.type("0.7\r")
    assert "run r4" in terminal.wait_for_run("run 4 of 4 · helpfulness · labeller ann · 3 labelled")
    terminal.type("k")
    assert "labelled 3 run(s) (1 fail, 1 pass, 1 score), skipped 1" in terminal.wait_for("skipped 1,")
    assert terminal.exit_code() == 0
    assert sorted(_labels(db)) == [
        ("r1", 0.7, "score", "ann", None),
        ("r2", 1.0, "pass_fail", "ann", None),
        ("r3", 0.0, "pass_fail", "ann", "misses the point"),
    ]


def test_a_session_resumes_where_the_labeller_stopped(db: str, terminals: list[Terminal]) -> None:
    first = _session(terminals, db)
    first.wait_for_run("run 1 of 4")
    first.type("p")
    first.wait_for_run("run 2 of 4")
    first.type("q")
    assert "labelled 1 run(s) (1 pass), skipped 0, 3 not reached" in first.wait_for("not reached")
    assert first.exit_code() == 0
    second = _session(terminals, db)
    screen = second.wait_for_run("run 1 of 3 · helpfulness · labeller ann")
    assert "run r3" in screen
    second.type("f")
    second.wait_for_run("run 2 of 3")
    second.type("q")
    assert second.exit_code() == 0
    other = Terminal("label", "--db", db, "--scorer", "helpfulness", "--labeller", "bob", "--sample", "1")
    terminals.append(other)
    assert "run r2" in other.wait_for_run("run 1 of 1")  # another labeller sees every run
    other.type("q")
    assert other.exit_code() == 0
    assert sorted(_labels(db)) == [
        ("r2", 1.0, "pass_fail", "ann", None),
        ("r3", 0.0, "pass_fail", "ann", None),
    ]


def test_ctrl_c_keeps_the_labels_stored(db: str, terminals: list[Terminal]) -> None:
    terminal = _session(terminals, db)
    terminal.wait_for_run("run 1 of 4")
    terminal.type("f")
    terminal.wait_for_run("run 2 of 4")
    terminal.type("\x03")  # the terminal turns it into SIGINT
    assert "labelled 1 run(s) (1 fail)" in terminal.wait_for("not reached")
    assert terminal.exit_code() == 130
    assert _labels(db) == [("r2", 0.0, "pass_fail", "ann", None)]
