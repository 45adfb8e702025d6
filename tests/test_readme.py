"""Every Python block of the READMEs and of the documentation pages (``docs/**/*.md``) runs as written,
offline, and prints what the text says it prints.

A block followed by ``prints`` and a ``text`` block must print exactly that text. A block that cannot
run offline is fenced without a language.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
READMES = [ROOT / "README.md", *sorted((ROOT / "integrations").glob("*/README.md"))]
DOCS = sorted((ROOT / "docs").glob("**/*.md"))
README_MAX_BYTES = 8192  # the README is the front door; the manual is the docs
BLOCK = re.compile(
    r"```python\n(?P<code>.*?)```(?:\s*\n(?:it )?prints:?\s*\n+```text\n(?P<out>.*?)```)?", re.DOTALL
)
NEEDS_REAL_JUDGE = 'Judge(model="openai/gpt-4o-mini"'


def _blocks() -> list[tuple[str, int, str, str | None]]:
    found = []
    for readme in [*READMES, *DOCS]:
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
    per_file = {name: [b for b in BLOCKS if b[0] == name] for name, *_ in BLOCKS}
    readmes = [str(readme.relative_to(ROOT)) for readme in READMES]
    assert all(any(b[3] is not None for b in per_file.get(readme, [])) for readme in readmes)
    docs = [b for b in BLOCKS if b[0].startswith("docs/")]
    assert len(docs) >= 15 and sum(b[3] is not None for b in docs) >= 12


def test_readme_is_the_front_door() -> None:
    readme = ROOT / "README.md"
    assert len(readme.read_bytes()) <= README_MAX_BYTES, "move the manual text into docs/"
    assert "## Two commands" in readme.read_text() and "docs/view-overview.png" in readme.read_text()
