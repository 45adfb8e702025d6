"""``agentevals replay`` names every line it cannot replay and exits non-zero, keeping those lines; the
records around them are delivered."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentevals import ScoreResult
from agentevals.cli import main
from agentevals.sinks import DeadLetter, MemorySink, replay


async def _dead_letters(path: Path, count: int) -> None:
    dead = DeadLetter(path)
    records = [ScoreResult(scorer_id="s", scorer_name="s", run_id=f"r{i}", score=1.0) for i in range(count)]
    await dead.write(records, MemorySink(), OSError("db locked"))
    dead.close()


async def test_replay_exits_non_zero_naming_the_lines_it_could_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "dead.jsonl"
    await _dead_letters(path, 2)
    lines = path.read_text(encoding="utf-8").splitlines()
    garbled = '{"sink": "sqlite", "record": {"run_id"'
    path.write_text("\n".join([lines[0], garbled, lines[1], '["not", "a", "line"]']) + "\n", encoding="utf-8")

    assert main(["replay", str(path), "--db", str(tmp_path / "scores.db")]) == 1
    captured = capsys.readouterr()
    assert "replayed 2 records" in captured.out
    assert f"{path}:2: kept, not replayed" in captured.err
    assert f"{path}:4: kept, not replayed" in captured.err
    assert path.read_text(encoding="utf-8").splitlines() == [garbled, '["not", "a", "line"]']


async def test_a_run_the_broker_refused_is_named_with_how_to_publish_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentevals import Run
    from agentevals._engine._forward._codec import run_entry_text
    from agentevals._engine._forward._refusal import dead_letter_run

    path = tmp_path / "dead.jsonl"
    entry = run_entry_text(Run(run_id="huge", input="q", output="a"), ["s"], entity=None)
    dead_letter_run(
        path, broker="amqp://h/", queue="agentevals", entry_text=entry, reason="MessageTooLarge: x"
    )

    assert main(["replay", str(path), "--db", str(tmp_path / "scores.db")]) == 1
    err = capsys.readouterr().err
    assert f"{path}:1:" in err and "run 'huge'" in err and "--broker URL" in err
    assert path.exists()


def test_the_function_reports_only_what_it_delivered_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "dead.jsonl"
    path.write_text("not json\n", encoding="utf-8")
    assert replay(path, MemorySink()) == 0
    assert path.read_text(encoding="utf-8") == "not json\n"
