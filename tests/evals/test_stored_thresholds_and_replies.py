"""What the viewer reads beside the scores: ``run_evals`` stores its thresholds per evaluation, ``report``
judges pass rates by the stored thresholds (``--pass-threshold`` overrides them), and every judged step
keeps the reply text it received (credentials masked, redaction applied, long replies cut) which the
run page shows escaped."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentevals import PromptStep, Run, ScoringEngine, create_scorer, run_evals
from agentevals._evals._catalog import stored_scorers, stored_thresholds
from agentevals._model._thresholds import Threshold
from agentevals._scoring._judge._judge import REPLY_LIMIT
from agentevals._store._store import open_store
from agentevals.cli import main
from agentevals.engine import DeliveryOptions, ExitOptions
from agentevals.redaction import EMAIL, mask
from agentevals.scorers import create_exact_match_scorer
from agentevals.sinks import JsonlSink, MemorySink, SQLiteSink
from agentevals.testing import ChatRequest, FakeJudgeServer, Reply

KEY = "sk-replies-0123456789-secret"
DATA = [
    {"input": "a", "ground_truth": "A"},
    {"input": "b", "ground_truth": "x"},
    {"input": "c", "ground_truth": "C"},
]


def _evaluate(db: Path, thresholds: dict[str, Any]) -> str:
    sink = SQLiteSink(db)
    length = create_scorer(id="length").generate_score(lambda run, **_: 0.25)
    result = run_evals(
        DATA,
        [create_exact_match_scorer(), length],
        target=str.upper,
        thresholds=thresholds,
        sinks=[sink],
        progress=False,
    )
    assert result.summary.eval_id is not None
    return result.summary.eval_id


def test_run_evals_stores_its_thresholds_per_evaluation(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    first = _evaluate(db, {"exact_match": 0.9})
    second = _evaluate(db, {"exact_match": {"min": 0.5}, "length": {"max": 0.3}})
    with open_store(db) as store:
        assert stored_thresholds(store, eval_id=first) == {"exact_match": Threshold(min=0.9)}
        assert stored_thresholds(store, eval_id=second) == {
            "exact_match": Threshold(min=0.5),
            "length": Threshold(max=0.3),
        }
        assert stored_thresholds(store) == stored_thresholds(store, eval_id=second)  # the latest
        rows = stored_scorers(store, eval_id=first)
        assert {(r.scorer_id, r.source, r.threshold) for r in rows} == {
            ("exact_match", "eval", Threshold(min=0.9)),
            ("length", "eval", None),
        }


def test_report_pass_rates_use_stored_thresholds_unless_overridden(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "s.db"
    _evaluate(db, {"exact_match": 0.9, "length": {"max": 0.3}})  # exact_match scores 1, 0, 1
    assert main(["report", "--db", str(db), "--json"]) == 0
    rates = {r["scorer_id"]: r for r in json.loads(capsys.readouterr().out)["pass_rates"]}
    assert rates["exact_match"] == {
        "scorer_id": "exact_match",
        "threshold": ">= 0.9",
        "origin": "stored",
        "scores": 3,
        "errored": 0,
        "passed": 2,
        "rate": pytest.approx(2 / 3),
    }
    assert (rates["length"]["threshold"], rates["length"]["passed"]) == ("<= 0.3", 3)

    assert main(["report", "--db", str(db), "--json", "--pass-threshold", "length=0.5"]) == 0
    rates = {r["scorer_id"]: r for r in json.loads(capsys.readouterr().out)["pass_rates"]}
    assert (rates["length"]["threshold"], rates["length"]["origin"], rates["length"]["passed"]) == (
        ">= 0.5",
        "option",
        0,
    )
    assert rates["exact_match"]["origin"] == "stored"
    assert main(["report", "--db", str(db), "--pass-threshold", "0"]) == 0
    printed = capsys.readouterr().out
    assert "pass rates" in printed and "dropped" in printed and "(--pass-threshold)" in printed
    assert main(["report", "--db", str(db), "--pass-threshold", "x=high"]) == 2
    assert "expected MIN or SCORER=MIN" in capsys.readouterr().err


def _respond(request: ChatRequest) -> Reply | dict[str, float] | str:
    if request.prompt.startswith("reason"):
        # Echoes the key and an email, and runs long: masked, redacted and cut when stored.
        return f"<script>alert(1)</script> mail ann@example.com, key {KEY}. " + "x" * (REPLY_LIMIT + 500)
    return {"score": 0.75}


def _judged_scorer(server: FakeJudgeServer) -> Any:
    return (
        create_scorer(id="judged", judge=server.judge(api_key=KEY))
        .generate_score(PromptStep(description="score", create_prompt=lambda run, **_: f"score {run.input}"))
        .generate_reason(PromptStep(description="why", create_prompt=lambda run, **_: f"reason {run.input}"))
    )


def test_each_judged_step_keeps_its_reply_masked_redacted_and_bounded(tmp_path: Path) -> None:
    db, jsonl = tmp_path / "s.db", tmp_path / "s.jsonl"
    with FakeJudgeServer(responder=_respond) as server:
        engine = ScoringEngine(
            {"judged": {"scorer": _judged_scorer(server), "threshold": 0.5}},
            sinks=[SQLiteSink(db), JsonlSink(jsonl)],
            redact=mask(EMAIL),
            exit=ExitOptions(handle_sigterm=False),
            delivery=DeliveryOptions(dead_letter=tmp_path / "dl.jsonl"),
        )
        engine.submit(Run(run_id="r1", input="question", output="answer"))
        assert engine.shutdown(timeout=30)
    with sqlite3.connect(db) as conn:
        (stored,) = conn.execute("SELECT judge_replies FROM agentevals_scores").fetchone()
    replies = json.loads(stored)
    assert set(replies) == {"generate_score", "generate_reason"}
    assert replies["generate_score"] == '{"score": 0.75}'
    reason = replies["generate_reason"]
    assert reason.startswith("<script>alert(1)</script> mail ") and "ann@example.com" not in reason
    assert KEY not in stored and "key " in reason
    assert reason.endswith("more characters not stored]") and len(reason) < REPLY_LIMIT + 100
    # A JSONL store keeps the replies in its lines; it has no scorers or drops (JsonlSink keeps records).
    with open_store(jsonl) as store:
        rows = store.connection.execute("SELECT judge_replies FROM agentevals_scores").fetchall()
        assert [json.loads(r[0]) for r in rows] == [replies]
        assert stored_thresholds(store) == {}
    with open_store(db) as store:
        assert stored_thresholds(store) == {"judged": Threshold(min=0.5)}


def test_the_run_page_shows_the_reply_under_the_prompt_escaped() -> None:
    pytest.importorskip("jinja2", reason="the view extra is not installed (uv sync --extra view)")
    from agentevals._view._render import render

    step = {"name": "analyze", "prompt": "analyze this", "reply": "<script>alert(1)</script>", "result": None}
    record = {
        "scorer_id": "judged",
        "scorer_version": "1",
        "outcome": "scored",
        "score": 0.75,
        "reason": None,
        "error_type": None,
        "skip_reason": None,
        "duration_ms": 1.0,
        "judge_model": None,
        "created_at": "2026-11-24T10:00:00",
        "steps": [step, {"name": "preprocess", "prompt": None, "result": "{}"}],  # no reply key: fine
    }
    data = {"run_id": "r1", "info": {}, "stored": True, "messages": [], "context": [], "ground_truth": None}
    page = render(
        "run.html", title="Run r1", path="/runs/r1", store="s.db", data={**data, "records": [record]}
    )
    assert "<script>alert(1)</script>" not in page
    sent, received = page.index("prompt sent"), page.index("reply received")
    assert sent < received and "&lt;script&gt;alert(1)&lt;/script&gt;" in page[received:]


def test_a_reply_that_could_not_be_parsed_is_kept_in_the_error_record(tmp_path: Path) -> None:
    memory = MemorySink()
    with FakeJudgeServer(responder=lambda request: Reply.malformed(f'{{"score": oops {KEY}')) as server:
        scorer = create_scorer(id="judged", judge=server.judge(api_key=KEY, max_attempts=1)).generate_score(
            PromptStep(description="score", create_prompt=lambda run, **_: f"score {run.input}")
        )
        engine = ScoringEngine(
            [scorer],
            sinks=[memory],
            exit=ExitOptions(handle_sigterm=False),
            delivery=DeliveryOptions(dead_letter=tmp_path / "dl.jsonl"),
        )
        engine.submit(Run(run_id="r1", input="question", output="answer"))
        assert engine.shutdown(timeout=30)
    (record,) = memory.records
    assert record.outcome == "failed" and record.error_type == "JudgeOutputError"
    assert record.generate_score_prompt == "score question"
    assert record.judge_replies["generate_score"].startswith('{"score": oops ')
    assert KEY not in record.judge_replies["generate_score"]
