from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentevals import ScoringEngine


@pytest.fixture
def dead_letter(tmp_path: Path) -> Path:
    return tmp_path / "deadletter.jsonl"


@pytest.fixture
def engines() -> Iterator[list[ScoringEngine]]:
    """Engines created in a test are shut down after it even when it fails."""
    made: list[ScoringEngine] = []
    yield made
    for engine in made:
        engine.shutdown(timeout=5)
