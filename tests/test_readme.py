"""Every Python block of the READMEs runs as written, offline, and prints what the text says it prints.

A block followed by ``prints`` and a ``text`` block must print exactly that text.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
READMES = [ROOT / "README.md", *sorted((ROOT / "integrations").glob("*/README.md"))]
BLOCK = re.compile(
    r"```python\n(?P<code>.*?)```(?:\s*\n(?:it )?prints:?\s*\n+```text\n(?P<out>.*?)```)?", re.DOTALL
)
NEEDS_REAL_JUDGE = 'Judge(model="openai/gpt-4o-mini"'


def _blocks() -> list[tuple[str, int, str, str | None]]:
    found = []
    for readme in READMES:
        for index, match in enumerate(BLOCK.finditer(readme.read_text())):
            found.append((str(readme.relative_to(ROOT)), index, match["code"], match["out"]))
    return found


BLOCKS = _blocks()


@pytest.mark.parametrize(
    ("readme", "index", "code", "expected"), BLOCKS, ids=[f"{b[0]}[{b[1]}]" for b in BLOCKS]
)
def test_readme_block_runs(
    readme: str, index: int, code: str, expected: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"readme_block_{index}"}
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        exec(compile(code, f"{readme}[python block {index}]", "exec"), namespace)
    if expected is not None:
        assert stdout.getvalue().strip() == expected.strip()
    if NEEDS_REAL_JUDGE in code:  # defining the scorer calls no model; check it was built
        assert namespace["grounded"].has_judge  # type: ignore[attr-defined]


def test_readmes_have_blocks_and_promised_outputs() -> None:
    per_readme = {readme: [b for b in BLOCKS if b[0] == readme] for readme, *_ in BLOCKS}
    assert len(per_readme["README.md"]) >= 5
    assert all(any(b[3] is not None for b in blocks) for blocks in per_readme.values())
    assert len(per_readme) == len(READMES)
