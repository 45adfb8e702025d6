"""``agentevals canary``: one epoch per call (or one every ``--every``), exit 3 and one JSON alert to the
``--webhook`` receiver when the scorer's agreement with the labels moved, nothing when it is stable; a
receiver that fails is logged, never a crash."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentevals.cli import main
from agentevals.testing import FakeJudgeServer
from tests.trust.trust_stores import write_labelled_runs

SPOTS_GOOD = """
from agentevals import create_scorer
helpfulness = create_scorer(id="helpfulness").generate_score(
    lambda run, **_: 1.0 if "good" in run.output_text else 0.0
)
"""
PASSES_EVERYTHING = """
from agentevals import create_scorer
helpfulness = create_scorer(id="helpfulness").generate_score(lambda run, **_: 1.0)
"""


class Receiver:
    """A webhook on 127.0.0.1: the JSON bodies POSTed to it, answered with ``status``."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.status = 204
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                receiver.bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(receiver.status)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/secret-token"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    thread = threading.Thread(target=found.server.serve_forever, daemon=True)
    thread.start()
    yield found
    found.server.shutdown()
    found.server.server_close()


@pytest.fixture
async def db(tmp_path: Path) -> str:
    """A SQLite store of ten runs scored ``helpfulness``, each labelled pass (a good answer) or fail."""
    path = str(tmp_path / "scores.db")
    await write_labelled_runs(path, "agentevals_scores")
    return path


@pytest.fixture
def scorers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """``--scorer`` specs of a scorer as configured before and after its formula changed."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "judge_before.py").write_text(SPOTS_GOOD)
    (tmp_path / "judge_after.py").write_text(PASSES_EVERYTHING)
    return {"before": "judge_before.py:helpfulness", "after": "judge_after.py:helpfulness"}


def _canary(db: str, scorer: str, *options: str) -> int:
    return main(["canary", "--db", db, "--scorer", scorer, *options])


def _epochs(db: str) -> int:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return int(
            conn.execute(
                "SELECT COUNT(DISTINCT eval_id) FROM agentevals_scores WHERE source = 'canary'"
            ).fetchone()[0]
        )


def test_a_stable_scorer_exits_0_and_posts_nothing(
    db: str, scorers: dict[str, str], receiver: Receiver, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _canary(db, scorers["before"], "--webhook", receiver.url) == 0
    assert "the first epoch, kept as the baseline" in capsys.readouterr().out
    assert _canary(db, scorers["before"], "--webhook", receiver.url) == 0
    assert capsys.readouterr().out.rstrip().endswith("; no drift")
    assert receiver.bodies == [] and _epochs(db) == 2


def test_a_changed_scorer_exits_3_warns_once_and_posts_one_alert(
    db: str, scorers: dict[str, str], receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    assert _canary(db, scorers["before"], "--webhook", receiver.url) == 0
    caplog.set_level(logging.WARNING, logger="agentevals.canary")
    assert _canary(db, scorers["after"], "--webhook", receiver.url) == 3
    warnings = [r for r in caplog.records if r.name == "agentevals.canary"]
    assert [r.levelno for r in warnings] == [logging.WARNING]
    assert "accuracy 1.000 [0.722, 1.000] -> 0.600" in warnings[0].getMessage()
    [alert] = receiver.bodies
    assert alert["event"] == "agentevals.canary.drift" and alert["scorer"] == "helpfulness"
    assert alert["store"] == db and alert["threshold"] == {"min": 0.5, "max": None}
    assert [m["metric"] for m in alert["moved"]] == ["accuracy", "kappa"]
    assert alert["disagreeing_runs"] == alert["changed_runs"] == ["r6", "r7", "r8", "r9"]
    assert alert["epoch"]["accuracy"]["value"] == 0.6 and alert["previous_epoch"]["accuracy"]["value"] == 1.0


def test_a_judged_scorer_whose_replies_change_sends_the_alert(
    db: str, tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    honest = {"value": True}

    def reply(request: Any) -> dict[str, bool]:
        return {"good": ("good answer" in str(request.body["messages"])) == honest["value"]}

    with FakeJudgeServer(responder=reply) as server:
        (tmp_path / "judged.py").write_text(
            "from pydantic import BaseModel\n"
            "from agentevals import Judge, PromptStep, create_scorer\n"
            "class Verdict(BaseModel):\n    good: bool\n"
            f"judge = Judge(model='openai/{server.model}', api_base={server.url!r}, api_key='fake-key')\n"
            "helpfulness = (create_scorer(id='helpfulness', judge=judge)\n"
            "    .analyze(PromptStep(description='verdict', output_schema=Verdict,\n"
            "        create_prompt=lambda run, **_: f'Is this answer good? {run.output_text}'))\n"
            "    .generate_score(lambda results, **_: 1.0 if results.analyze_step_result.good else 0.0))\n"
        )
        monkeypatch.chdir(tmp_path)
        spec = str(tmp_path / "judged.py") + ":helpfulness"
        assert [_canary(db, spec, "--webhook", receiver.url) for _ in range(2)] == [0, 0]
        assert receiver.bodies == []
        honest["value"] = False  # the model behind the judge changed
        assert _canary(db, spec, "--webhook", receiver.url) == 3
    [alert] = receiver.bodies
    assert alert["epoch"]["accuracy"]["value"] == 0.0
    assert alert["epoch"]["scorer_version"] == alert["previous_epoch"]["scorer_version"]


def test_a_receiver_that_fails_is_logged_and_the_drift_still_exits_3(
    db: str, scorers: dict[str, str], receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    receiver.status = 500
    assert _canary(db, scorers["before"]) == 0
    assert _canary(db, scorers["after"], "--webhook", receiver.url) == 3
    assert len(receiver.bodies) == 1
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert errors == [f"agentevals canary: the alert to {receiver.url.split('/hooks')[0]} was not delivered: "
                      "HTTP Error 500: Internal Server Error"]  # fmt: skip
    assert "secret-token" not in caplog.text


def test_an_unreachable_receiver_is_logged(
    db: str, scorers: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    assert _canary(db, scorers["before"]) == 0
    assert _canary(db, scorers["after"], "--webhook", "http://127.0.0.1:9/hook") == 3
    assert any("was not delivered" in r.getMessage() for r in caplog.records if r.levelno == logging.ERROR)


def test_every_repeats_the_epochs_until_interrupted(
    db: str, scorers: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr("agentevals._cli._canary.time.sleep", sleep)
    assert _canary(db, scorers["before"], "--every", "2h") == 130
    assert _epochs(db) == 2 and len(capsys.readouterr().out.splitlines()) == 2
    assert all(7000 < wait <= 7200 for wait in waits)


def test_the_pinned_runs_can_come_from_a_file(
    db: str, scorers: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pinned.txt").write_text("# the runs we watch\nr0\n\nr7  # a bad one\n")
    assert _canary(db, scorers["before"], "--runs", str(tmp_path / "pinned.txt")) == 0
    assert "judged 2 runs" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--every", "soon"], "--every 'soon': expected a number and a unit"),
        (["--every", "0m"], "--every '0m'"),
        (["--webhook", "ftp://example.com/x"], "expected an http:// or https:// URL"),
        (["--runs", "missing.txt"], "--runs: "),
        (["--concurrency", "0"], "--concurrency 0: expected 1 or more"),
    ],
)
def test_bad_options_exit_2_saying_what_is_expected(
    db: str, scorers: dict[str, str], options: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _canary(db, scorers["before"], *options) == 2
    assert message in capsys.readouterr().err


def test_a_store_without_labels_of_the_scorer_exits_2(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _canary(db, "exact_match") == 2
    assert "nobody labelled a run 'exact_match'" in capsys.readouterr().err


def test_a_jsonl_store_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "scores.jsonl").write_text("")
    assert _canary(str(tmp_path / "scores.jsonl"), "exact_match") == 2
    assert "keeps score records only" in capsys.readouterr().err
