"""Scorer.version: set by the user, else a digest of the configuration stable across processes; records
carry it, and a record's id derives from (run, scorer, version)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import types
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentevals import Judge, PromptStep, Run, create_scorer
from agentevals._scoring._steps import ScoreOutput
from agentevals.scorers.code import create_regex_scorer
from agentevals.sinks import SQLiteSink, record_to_row


def _scorer_from_source(body: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(f"fn = lambda run, **_: {body}", "<scorer>", "exec"), namespace)
    return create_scorer(id="x").generate_score(namespace["fn"])


def test_prebuilt_versions_follow_their_options() -> None:
    assert create_regex_scorer("a").version == create_regex_scorer("a").version
    assert create_regex_scorer("a").version != create_regex_scorer("b").version
    assert len(create_regex_scorer("a").version) == 12


def test_an_edited_function_changes_the_version_and_a_set_version_wins() -> None:
    assert _scorer_from_source("1.0").version == _scorer_from_source("1.0").version
    assert _scorer_from_source("1.0").version != _scorer_from_source("0.5").version
    scorer = create_scorer(id="x", version="2").generate_score(lambda run, **_: 1.0)
    assert scorer.version == "2" and scorer.with_id("y").version == "2"
    assert scorer.with_id("y").version == "2"
    plain = create_scorer(id="x").generate_score(lambda run, **_: 1.0)
    assert plain.version != plain.with_id("y").version  # the id is part of it


def _scorer_calling_a_helper(helper_body: str) -> Any:
    """A scorer whose step calls a module-level formula, as the prebuilt scorers' steps do."""
    module = types.ModuleType("user_scorers")
    source = (
        f"def formula(text):\n    return {helper_body}\n\nstep = lambda run, **_: formula(run.output_text)\n"
    )
    exec(compile(source, "<user_scorers>", "exec"), module.__dict__)
    return create_scorer(id="x").generate_score(module.step)


def test_an_edited_formula_a_step_calls_changes_the_version() -> None:
    assert (
        _scorer_calling_a_helper("float(bool(text))").version
        == _scorer_calling_a_helper("float(bool(text))").version
    )
    assert (
        _scorer_calling_a_helper("float(bool(text))").version
        != _scorer_calling_a_helper("float(len(text) > 3)").version
    )


def _judged(judge: Judge) -> Any:
    prompt = PromptStep("Is it polite?", lambda run, **_: run.output_text, ScoreOutput)
    return create_scorer(id="polite", judge=judge).generate_score(prompt)


def test_the_judge_settings_that_shape_replies_change_the_version_and_credentials_do_not() -> None:
    base = _judged(Judge(model="openai/gpt-4o-mini", api_key="sk-one")).version
    assert base == _judged(Judge(model="openai/gpt-4o-mini", api_key="sk-two", timeout=5.0)).version
    for changed in (
        Judge(model="openai/gpt-4o-mini", temperature=0.7),
        Judge(model="openai/gpt-4o-mini", structured_output="json_object"),
        Judge(model="openai/gpt-4o-mini", max_tokens=300),
        Judge(model="openai/gpt-4o-mini", completion_kwargs={"top_p": 0.5}),
        Judge(model="openai/gpt-4o", api_key="sk-one"),
    ):
        assert _judged(changed).version != base, changed


def test_version_is_the_same_in_another_process() -> None:
    code = "from agentevals.scorers.code import create_regex_scorer as c; print(c('a+').version)"
    seen = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        seen.add(out.stdout.strip())
    assert seen == {create_regex_scorer("a+").version}


async def test_records_carry_the_version_and_resent_records_add_no_row(tmp_path: Path) -> None:
    scorer = create_scorer(id="len", version="7").generate_score(lambda run, **_: 1.0)
    first = await scorer.run(Run(run_id="r1", output="x"))
    again = first.model_copy(update={"created_at": datetime(2030, 1, 1, tzinfo=UTC)})  # a redelivery
    assert first.scorer_version == "7"
    assert record_to_row(first)["id"] == record_to_row(again)["id"]
    other = first.model_copy(update={"scorer_version": "8"})
    assert record_to_row(other)["id"] != record_to_row(first)["id"]
    sink = SQLiteSink(tmp_path / "s.db")
    await sink.write([first, again])
    await sink.write([again, other])
    await sink.close()
    with sqlite3.connect(tmp_path / "s.db") as conn:
        rows = conn.execute("SELECT scorer_version FROM agentevals_scores ORDER BY 1").fetchall()
    assert rows == [("7",), ("8",)]
