"""Names renamed before the first release: each raises an ``ImportError`` naming its replacement."""

from __future__ import annotations

import importlib

import pytest

from agentevals._renamed import RENAMED, RenamedError


def _split(qualified: str) -> tuple[str, str]:
    module, _, name = qualified.rpartition(".")
    return module, name


@pytest.mark.parametrize("old", sorted(RENAMED))
def test_a_renamed_name_raises_naming_its_replacement(old: str) -> None:
    module, name = _split(old)
    with pytest.raises(ImportError) as caught:
        getattr(importlib.import_module(module), name)
    assert str(caught.value) == f"{old} was renamed {RENAMED[old]}"


@pytest.mark.parametrize("old", sorted(RENAMED))
def test_the_replacement_exists(old: str) -> None:
    module, name = _split(RENAMED[old].removesuffix("()"))
    assert getattr(importlib.import_module(module), name) is not None


def test_a_from_import_shows_the_replacement() -> None:
    with pytest.raises(RenamedError) as caught:
        from agentevals.scorers import regex  # noqa: F401
    assert str(caught.value) == "agentevals.scorers.regex was renamed agentevals.scorers.create_regex_scorer"
    with pytest.raises(ImportError) as caught:
        from agentevals import EngineStats  # noqa: F401
    assert str(caught.value) == "agentevals.EngineStats was renamed agentevals.engine.EngineStats"


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    scorers = importlib.import_module("agentevals.scorers")
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = scorers.nope
    assert not hasattr(scorers, "nope")
