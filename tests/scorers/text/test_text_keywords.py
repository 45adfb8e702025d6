"""extract_keywords: keyword-extractor 0.0.28 rules (expected values recorded from it under node 20)."""

from __future__ import annotations

import pytest

from agentevals.scorers._text import extract_keywords
from agentevals.scorers._text.keywords import english_stop_words


def test_stop_words_are_the_smart_list() -> None:
    words = english_stop_words()
    assert len(words) == 570  # 571 entries, one duplicate
    assert {"a", "a's", "the", "hello", "zero", "yourselves"} <= words
    assert "fox" not in words


@pytest.mark.parametrize(
    ("text", "keywords"),
    [
        ("The quick brown fox jumps over the lazy dog", ["quick", "brown", "fox", "jumps", "lazy", "dog"]),
        ("The quick-brown fox!", ["quick-brown", "fox"]),  # hyphenated words stay one keyword
        ("The 123 quick 456 brown fox", ["quick", "brown", "fox"]),  # digit-only tokens dropped
        ("'quoted' rock'n'roll '' “curly” ‘single’ don't", ["quoted", "rock'n'roll", "curly", "single"]),
        ("& a& # _ @x abc123 123 ١٢٣ 4.5 -", ["a&", "@x", "abc123", "١٢٣", "-"]),
        (
            "Visit HTTPS://Example.COM/X and https://Example.com/Y, (Paris)!",
            ["visit", "https//examplecom/x", "https://Example.com/Y,", "paris"],
        ),
        ("<div class='x'>Hello</div> <br/> Tokyo", ["tokyo"]),
        ("Ünïcödé Straße ΟΔΟΣ İstanbul", ["ünïcödé", "straße", "οδος", "i̇stanbul"]),
        ('one, two; three: four? five! (six) "seven"', []),  # all stop words
        ("a\u00a0b\u3000c\td", []),  # JavaScript whitespace splits; single letters are stop words
    ],
)
def test_recorded_keyword_extractor_outputs(text: str, keywords: list[str]) -> None:
    assert extract_keywords(text) == keywords


def test_empty_blank_and_markup_only() -> None:
    assert extract_keywords("") == []
    assert extract_keywords(" \n\t\u00a0") == []
    assert extract_keywords("<p></p>") == []


def test_lowercased_and_deduplicated_in_order() -> None:
    assert extract_keywords("Fox fox FOX dog Fox") == ["fox", "dog"]


def test_100_kb_input() -> None:
    text = "Alpha, beta; gamma! " * 5_000
    assert len(text) == 100_000
    assert extract_keywords(text) == ["alpha", "beta", "gamma"]
