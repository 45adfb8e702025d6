"""examples/fake_agent_model.py runs offline and prints what it promises."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "fake_agent_model.py"


def test_the_fake_agent_model_example(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["It is sunny, 21°C.", "It |is |light |snow, |-3°C."]
    reason = "The score is 1.0 because the answer meets the criterion: the judged parts hold up."
    assert lines[2:] == [f"answer_relevancy 1.0 {reason}"] * 2
