"""``agentevals.redaction.mask``: every string of a record masked, deeply; and the engine's redactor
reaching every stored or logged text (sinks, the dead-letter file, log lines, judge retry logs)."""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentevals import PromptStep, Run, ScoreRecord, ScoreResult, ScoringEngine, create_scorer
from agentevals.engine import DeliveryOptions, ExitOptions
from agentevals.redaction import API_KEY, CREDIT_CARD, EMAIL, PHONE, mask, redact_text
from agentevals.results import JudgeCall, ScoreFailure
from agentevals.sinks import JsonlSink, MemorySink, RetryPolicy, SQLiteSink
from agentevals.testing import FakeJudgeServer, Reply

ADDRESS = "ann.lee@example.com"


class Claims(BaseModel):
    claims: list[str]


@dataclasses.dataclass
class Note:
    text: str


class Opaque:
    def __repr__(self) -> str:
        return f"Opaque({ADDRESS})"


def _conversation() -> Run:
    return Run.from_messages(
        [
            {"role": "system", "content": f"Support agent for {ADDRESS}"},
            {"role": "user", "content": f"I am {ADDRESS}"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": json.dumps({"email": ADDRESS})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": f"found {ADDRESS}"},
            {"role": "assistant", "content": f"Hello {ADDRESS}"},
        ],
        ground_truth={"expected": [ADDRESS]},
        request_context={"user": ADDRESS, ADDRESS: "as a key"},
    )


def _full_record() -> ScoreResult:
    run = _conversation()
    loop: list[Any] = [ADDRESS]
    loop.append(loop)
    return ScoreResult(
        scorer_id="s",
        scorer_name="s",
        run_id=f"run-{ADDRESS}",
        trace_id=ADDRESS,
        score=1.0,
        reason=f"mail {ADDRESS}",
        input=run.input,
        output=run.output,
        ground_truth=run.ground_truth,
        request_context=run.request_context,
        preprocess_step_result=Claims(claims=[ADDRESS]),
        analyze_step_result={"notes": (Note(ADDRESS), {ADDRESS}), "blob": ADDRESS.encode(), "loop": loop},
        generate_score_step_result=Opaque(),
        preprocess_prompt=f"Extract from {ADDRESS}",
        analyze_prompt=ADDRESS,
        generate_score_prompt=ADDRESS,
        generate_reason_prompt=ADDRESS,
        judge_calls=[JudgeCall(step="analyze", model="m", ok=False, error=f"400: bad {ADDRESS}")],
        metadata={"deep": [[{"x": ADDRESS}]]},
    )


def _text_of(record: ScoreRecord) -> str:
    from agentevals._store._row import record_to_json
    from agentevals.sinks._sanitize import sanitized

    return json.dumps(record_to_json(sanitized(record))) + repr(record)


def test_mask_covers_every_string_of_a_record_deeply() -> None:
    record = _full_record()
    assert ADDRESS in _text_of(record)
    masked = mask([EMAIL])(record)
    assert ADDRESS not in _text_of(masked)
    assert "<redacted>" in masked.input.input_messages[0].content
    assert masked.output[0].tool_invocations[0].args == {"email": "<redacted>"}  # models stay models
    assert masked.preprocess_step_result == Claims(claims=["<redacted>"])
    assert masked.judge_calls[0].error == "400: bad <redacted>"
    assert masked.request_context == {"user": "<redacted>", "<redacted>": "as a key"}
    assert masked.score == 1.0 and masked.created_at == record.created_at
    failure = ScoreFailure(scorer_id="s", scorer_name="s", run_id="r", error_type="E", error_message=ADDRESS)
    assert mask([EMAIL])(failure).error_message == "<redacted>"


def test_mask_leaves_unmatched_records_alone_and_takes_literals() -> None:
    record = ScoreResult(scorer_id="s", scorer_name="s", run_id="r", score=1.0, input={"a": ["b"]})
    assert mask([EMAIL])(record) is record
    redact = mask(["Project Falcon", "a.b"], replacement="***")
    assert redact.text("Project Falcon: a.b, not axb") == "***: ***, not axb"
    assert mask(re.compile("falcon", re.IGNORECASE)).text("FALCON") == "<redacted>"
    with pytest.raises(ValueError, match="at least one"):
        mask([])
    with pytest.raises(TypeError):
        mask([42])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (PHONE, "+44 20 7946 0958"),
        (PHONE, "(555) 123-4567"),
        (CREDIT_CARD, "4111 1111 1111 1111"),
        (API_KEY, "sk-proj-abcdefghijklmnopqrstuvwx"),
        (API_KEY, "AKIAABCDEFGHIJKLMNOP"),
    ],
)
def test_ready_made_patterns(pattern: re.Pattern[str], text: str) -> None:
    assert mask([pattern]).text(f"see {text} here") == "see <redacted> here"


def test_redact_text_with_any_redactor() -> None:
    assert redact_text(None, ADDRESS) == ADDRESS
    assert redact_text(mask([EMAIL]), f"x {ADDRESS}") == "x <redacted>"

    def only_input(record: ScoreRecord) -> ScoreRecord:
        return record.model_copy(update={"input": None})

    def broken(record: ScoreRecord) -> ScoreRecord:
        raise RuntimeError(ADDRESS)

    assert redact_text(only_input, "no user text") == "no user text"
    assert redact_text(broken, ADDRESS) == "<redacted>"


class RejectingSink:
    """Fails every write with an error quoting the record (as a database error may)."""

    name = "rejecting"

    async def write(self, records: Sequence[ScoreRecord]) -> None:
        raise ValueError(f"rejected {records[0].input!r} / {records[0].reason}")

    async def close(self) -> None:
        return None


def test_engine_redaction_reaches_every_sink_the_dead_letter_file_and_the_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with FakeJudgeServer() as server:
        # The provider's error echoes the prompt: it reaches the judge's retry log.
        server.push(Reply.error(500, f"cannot grade the text of {ADDRESS}"), {"claims": [ADDRESS]})
        judged = (
            create_scorer(id="judged", judge=server.judge())
            .preprocess(
                PromptStep(
                    description="claims",
                    create_prompt=lambda run, **_: f"List the claims in {run.output_text}",
                    output_schema=Claims,
                )
            )
            .analyze(lambda results, **_: {"seen": results.preprocess_step_result.claims})
            .generate_score(lambda **_: 1.0)
            .generate_reason(lambda run, **_: f"answered {run.output_text}")
        )

        def explode(run: Run, **_: Any) -> float:
            raise RuntimeError(f"cannot score {run.output_text}")

        failing = create_scorer(id="failing").generate_score(explode)
        memory = MemorySink()
        jsonl, db, dead = tmp_path / "s.jsonl", tmp_path / "s.db", tmp_path / "dead.jsonl"
        engine = ScoringEngine(
            [judged, failing],
            sinks=[memory, JsonlSink(jsonl), SQLiteSink(db), RejectingSink()],
            redact=mask([EMAIL]),
            delivery=DeliveryOptions(retry=RetryPolicy(attempts=2, initial=0.01), dead_letter=dead),
            exit=ExitOptions(handle_sigterm=False),
        )
        assert engine.submit(_conversation())
        assert not engine.submit({"input": ADDRESS, "entity": [ADDRESS]})  # type: ignore[arg-type]
        report = engine.shutdown(timeout=30)
    assert report.scored == 1 and report.failed == 1 and report.dead_lettered == 2
    assert {r.scorer_id for r in memory.records} == {"judged", "failing"}
    assert len(server.requests) == 2 and ADDRESS in server.requests[0].prompt  # the judge saw it
    stored = {
        "memory": "".join(_text_of(r) for r in memory.records),
        "jsonl": jsonl.read_text(),
        "sqlite": json.dumps(sqlite3.connect(db).execute("SELECT * FROM agentevals_scores").fetchall()),
        "dead-letter": dead.read_text(),
        "logs": "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records),
    }
    assert "<redacted>" in stored["jsonl"] and "<redacted>" in stored["dead-letter"]
    assert any("attempt 1/4 failed" in r.getMessage() for r in caplog.records)  # the retry was logged
    assert any("ignored an invalid run" in r.getMessage() for r in caplog.records)
    assert [where for where, text in stored.items() if ADDRESS in text] == []
