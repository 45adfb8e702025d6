"""AFINN-165 comparative sentiment with npm ``sentiment`` 5.0.2 tokenization (values recorded from it)."""

from __future__ import annotations

import pytest

from agentevals.scorers._text import comparative_sentiment, sentence_split
from agentevals.scorers._text.sentiment import lexicon, sentiment_score, sentiment_tokens


def test_lexicon_is_afinn_165_plus_emoji() -> None:
    table = lexicon()
    assert len(table) == 3_382 + 767
    assert table["good"] == 3 and table["bad"] == -3 and table["outstanding"] == 5
    assert table["😍"] == 3 and table["😭"] == -1


@pytest.mark.parametrize(
    ("text", "tokens", "score", "comparative"),
    [
        ("", [""], 0, 0.0),
        ("Not bad,  really!\nGood.", ["not", "bad", "really", "good"], 6, 1.5),
        ("a\tgood day", ["a\tgood", "day"], 0, 0.0),  # a single tab does not split
        ("I don't like it", ["i", "don't", "like", "it"], -2, -0.5),
        ("not not good", ["not", "not", "good"], -3, -1.0),
        ("😍😍", ["😍😍"], 0, 0.0),
        ("😍 😍", ["😍", "😍"], 6, 3.0),
        ("Cool stuff is cool", ["cool", "stuff", "is", "cool"], 2, 0.5),  # phrases never match
        ("  good  ", ["good"], 3, 3.0),
        ("GOOD", ["good"], 3, 3.0),
        ("non good", ["non", "good"], -3, -1.5),
        ("\u00a0\u00a0good", ["good"], 3, 3.0),
    ],
)
def test_recorded_sentiment_outputs(text: str, tokens: list[str], score: int, comparative: float) -> None:
    assert sentiment_tokens(text) == tokens
    assert sentiment_score(tokens) == score
    assert comparative_sentiment(text) == comparative


def test_hand_computed_comparative() -> None:
    # love (+3) and hate (-3) cancel; "amazing" (+4) over 5 tokens
    assert comparative_sentiment("I love and hate it") == 0.0
    assert comparative_sentiment("This is truly amazing stuff") == 0.8


def test_sentence_split() -> None:
    assert sentence_split("Hi there. How are you?! fine") == ["Hi there.", " How are you?!"]
    assert sentence_split("no terminator") == ["no terminator"]
    assert sentence_split("") == [""]
    assert sentence_split("...") == ["..."]  # no text before the terminator: whole text
    assert sentence_split("Wait... what?") == ["Wait...", " what?"]
    assert sentence_split("Line one\nstill one. Two!") == ["Line one\nstill one.", " Two!"]


def test_100_kb_input() -> None:
    text = "good day. " * 10_000
    assert comparative_sentiment(text) == 3 * 10_000 / 20_000
    assert len(sentence_split(text)) == 10_000
