"""Keyword extraction with the rules of the npm package ``keyword-extractor`` 0.0.28.

Mastra's keyword-coverage scorer calls ``extract(text, {language: 'english',
remove_digits: true, return_changed_case: true, remove_duplicates: true})``;
:func:`extract_keywords` follows the same steps:

1. strip HTML tags (``<...>``) and trim;
2. split on every single whitespace character;
3. in each token that is not a URL (``http://`` or ``https://`` anywhere in it),
   delete ``. , ; ! ? ( ) : "`` and the curly quotes ``“ ” ‘ ’`` anywhere, plus one
   leading and one trailing ``'``; a one-character token also loses ``_ @ & #``;
4. drop tokens made only of ASCII digits, and empty tokens;
5. lower-case (URLs keep their case), drop English stop words, de-duplicate
   keeping the first occurrence.

Hyphenated words stay one token (``quick-brown``). The stop words are the SMART
list (Salton's SMART system, as published with Lewis et al. 2004, 571 entries),
the list keyword-extractor ships for English; it is taken from the
``python-rake`` package, whose ``SmartStopList`` is the identical list.
"""

from __future__ import annotations

import re
from functools import cache

from RAKE.stoplists import SmartStopList  # type: ignore[import-untyped]

from agentevals.scorers._text._js import JS_WHITESPACE_CLASS, js_trim

_HTML_TAG = re.compile(r"<[^>]+>")
_SPLIT = re.compile(JS_WHITESPACE_CLASS)
_URL = re.compile(r"https?://")
_PUNCTUATION = re.compile("[.,;!?():\"“”‘’]|^'|'\\Z")
_SINGLE_CHAR_JUNK = re.compile("[_@&#]")
_ASCII_DIGITS = re.compile("[0-9]+")


@cache
def english_stop_words() -> frozenset[str]:
    """The SMART English stop-word list used by :func:`extract_keywords`."""
    words: list[str] = SmartStopList.words()
    return frozenset(words)


def _clean(token: str) -> str:
    if _URL.search(token):
        return token
    word = _PUNCTUATION.sub("", token)
    if len(word) == 1:
        word = _SINGLE_CHAR_JUNK.sub("", word)
    return word


def extract_keywords(text: str) -> list[str]:
    """Return the distinct keywords of ``text`` in order of first appearance.

    >>> extract_keywords("The quick-brown fox (a fox!) jumped over 42 lazy dogs.")
    ['quick-brown', 'fox', 'jumped', 'lazy', 'dogs']
    """
    stripped = js_trim(_HTML_TAG.sub("", text))
    if not stripped:
        return []
    stop_words = english_stop_words()
    keywords: dict[str, None] = {}
    for token in _SPLIT.split(stripped):
        word = _clean(token)
        if not word or _ASCII_DIGITS.fullmatch(word):
            continue
        is_url = _URL.search(word) is not None
        lowered = word.lower()
        if lowered not in stop_words:
            keywords.setdefault(word if is_url else lowered, None)
    return list(keywords)
