"""Importing agentevals stays light: LiteLLM (~2-7 s, ~150 MiB) is imported only when a judge is called."""

from __future__ import annotations

import subprocess
import sys


def test_import_agentevals_does_not_import_litellm() -> None:
    code = (
        "import agentevals, agentevals.scorers, agentevals.scorers.utils, agentevals.testing, sys; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('litellm', 'openai')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_importtime_shows_no_litellm() -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import agentevals"],
        capture_output=True,
        text=True,
        check=True,
    )
    imported = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line]
    assert "agentevals" in imported
    assert not [m for m in imported if m.startswith("litellm")]
