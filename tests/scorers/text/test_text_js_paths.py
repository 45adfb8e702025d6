"""The fast ``str.split()`` paths agree with literal JavaScript-regex transcriptions on random text."""

from __future__ import annotations

import random
import re

from agentevals.scorers._text import dice_similarity, extract_keywords
from agentevals.scorers._text._js import JS_WHITESPACE_CLASS, collapse_whitespace, js_trim, js_words
from agentevals.scorers._text.sentiment import sentiment_tokens

_JS_SPACE = re.compile(JS_WHITESPACE_CLASS)
_PIECES = [
    "a", "B", "é", "good", "bad", "not", "http://X.io", "'", '"', ".", ",", "(", ")", "-", "_", "#", "42",
    " ", "  ", "\t", "\n", "\u00a0", "\u3000", "\ufeff", "\x1c", "\x85", "😀", "İ", "don't", "<b>", "</b>",
]  # fmt: skip


def _texts(seed: int, count: int = 400) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choices(_PIECES, k=rng.randint(0, 14))) for _ in range(count)]


def test_js_words_and_collapse() -> None:
    for text in _texts(1):
        expected = [w for w in _JS_SPACE.split(text) if w]
        assert js_words(text) == expected, repr(text)
        assert collapse_whitespace(text) == js_trim(re.sub(JS_WHITESPACE_CLASS + "+", " ", text))


def test_sentiment_tokens_match_the_regex_transcription() -> None:
    for text in _texts(2):
        t = text.lower().replace("\n", " ")
        t = re.sub(r"[.,/#!?$%^&*;:{}=_`\"~()]", " ", t)
        t = re.sub(JS_WHITESPACE_CLASS + "{2,}", " ", t)
        assert sentiment_tokens(text) == js_trim(t).split(" "), repr(text)


def test_keyword_fast_path_matches_the_per_token_path() -> None:
    # A URL anywhere sends extract_keywords down the per-token path; it must agree otherwise.
    for text in _texts(3):
        if "http" in text:
            continue
        with_url = extract_keywords(text + " https://Z.example")
        assert [*extract_keywords(text), "https://Z.example"] == with_url, repr(text)


def test_dice_counter_and_numpy_paths_match_the_reference() -> None:
    # Lengths on both sides of the numpy threshold (200 code units), emoji included.
    rng = random.Random(4)
    for _ in range(120):
        a = "".join(rng.choices("abcdeé😀 ", k=rng.randint(2, 600)))
        b = "".join(rng.choices("abcdeé😀 ", k=rng.randint(2, 600)))
        first, second = "".join(js_words(a)), "".join(js_words(b))
        assert dice_similarity(a, b) == _reference(first, second), (a, b)


def _reference(a: str, b: str) -> float:
    units_a = a.encode("utf-16-le")
    units_b = b.encode("utf-16-le")
    ua = [units_a[i : i + 2] for i in range(0, len(units_a), 2)]
    ub = [units_b[i : i + 2] for i in range(0, len(units_b), 2)]
    if ua == ub:
        return 1.0
    pool: dict[bytes, int] = {}
    for i in range(len(ua) - 1):
        key = ua[i] + ua[i + 1]
        pool[key] = pool.get(key, 0) + 1
    hits = 0
    for i in range(len(ub) - 1):
        key = ub[i] + ub[i + 1]
        if pool.get(key, 0) > 0:
            pool[key] -= 1
            hits += 1
    return 2.0 * hits / (len(ua) + len(ub) - 2)
