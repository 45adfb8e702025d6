"""``EvalResult.to_records()``, ``EvalResult.print()`` and ``rich.print(result)``."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console

from agentevals import Run, create_scorer
from agentevals.evals import EvalResult, run_evals
from agentevals.results import ScoreFailure, ScoreResult, ScoreSkipped
from agentevals.scorers import create_exact_match_scorer


def _result() -> EvalResult:
    def boom(run: Run, **_: Any) -> float:
        if run.input == "b":
            raise ValueError("scorer broke [red]on purpose[/red]")
        return 1.0

    data = [
        {"input": "a", "ground_truth": "A"},
        {"input": "b", "ground_truth": "x"},
        {"input": "c"},  # no ground truth: exact_match skips it
    ]
    scorers = [create_exact_match_scorer(), create_scorer(id="boom").generate_score(boom)]
    return run_evals(data, scorers, str.upper, progress=False, concurrency=3)


def test_to_records_is_every_record_flat_in_item_order() -> None:
    result = _result()
    records = result.to_records()
    assert [(r.run_id == i.run.run_id, r.scorer_id) for i in result.items for r in i.results.values()] == [
        (True, r.scorer_id) for r in records
    ]
    assert [(r.scorer_id, type(r)) for r in records] == [
        ("exact_match", ScoreResult),
        ("boom", ScoreResult),
        ("exact_match", ScoreResult),
        ("boom", ScoreFailure),
        ("exact_match", ScoreSkipped),
        ("boom", ScoreResult),
    ]
    assert [r.input for r in records[::2]] == ["a", "b", "c"]


def test_print_and_rich_print_show_the_eval_table(capsys: pytest.CaptureFixture[str]) -> None:
    result = _result()
    result.print()
    printed = capsys.readouterr().out
    for text in ("agentevals: scores", "exact_match", "boom", "item 1", "errored"):
        assert text in printed
    assert "[red]on purpose[/red]" in printed  # user text is shown as is, never read as markup
    console = Console(file=io.StringIO(), width=160)
    console.print(result)  # __rich__, as rich.print(result)
    assert isinstance(console.file, io.StringIO)
    via_rich = console.file.getvalue()
    assert (
        "agentevals: scores" in via_rich and "3 items, 3 runs: 2/3 (66.7%) runs passed; 1 errored" in via_rich
    )
    assert "[red]on purpose[/red]" in via_rich


def test_print_into_a_pipe_keeps_every_column(capsys: pytest.CaptureFixture[str]) -> None:
    long_id = "a_scorer_with_a_rather_long_identifier_that_needs_room"
    scorer = create_scorer(id=long_id).generate_score(lambda run, **_: 1.0)
    result = run_evals([{"input": "a"}], [scorer], str.upper, thresholds={long_id: 0.75}, progress=False)
    result.print()
    row = next(line for line in capsys.readouterr().out.splitlines() if long_id in line)  # not wrapped
    assert ">= 0.75 ✓" in row and "1/1 (100.0%)" in row
