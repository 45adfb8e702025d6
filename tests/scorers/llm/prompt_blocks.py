"""Reading the data blocks of a judge prompt (see ``agentevals._scoring._judge._fence``) in tests."""

from __future__ import annotations

import re

BOUNDARY = re.compile(r"^<<<(?:DATA|END) [0-9a-f]{16}>>>\n", re.MULTILINE)
BLOCK = re.compile(r"^<<<DATA ([0-9a-f]{16})>>>\n(.*?)\n<<<END \1>>>$", re.MULTILINE | re.DOTALL)


def blocks(prompt: str) -> list[str]:
    """The texts of the prompt's data blocks, in order."""
    return [match.group(2) for match in BLOCK.finditer(prompt)]


def unfenced(prompt: str | None) -> str:
    """The prompt without its blocks' boundary lines (their texts kept in place)."""
    return BOUNDARY.sub("", f"{prompt or ''}\n")
