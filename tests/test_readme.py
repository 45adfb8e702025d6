"""Every Python block of the README runs as written (offline)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL)
NEEDS_REAL_JUDGE = 'Judge(model="openai/gpt-4o-mini"'


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code = BLOCKS[index]
    namespace: dict[str, object] = {"__name__": f"readme_block_{index}"}
    exec(compile(code, f"README.md[python block {index}]", "exec"), namespace)
    if NEEDS_REAL_JUDGE in code:  # defining the scorer calls no model; check it was built
        assert namespace["grounded"].has_judge  # type: ignore[attr-defined]


def test_readme_has_blocks() -> None:
    assert len(BLOCKS) >= 5
