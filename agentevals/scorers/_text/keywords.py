"""Keyword extraction with the rules of the npm package ``keyword-extractor`` 0.0.28.

:func:`extract_keywords` does what ``extract(text, {language: 'english',
remove_digits: true, return_changed_case: true, remove_duplicates: true})`` does, step by step:

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

from agentevals.scorers._text._js import js_trim, js_words, python_split_agrees

_HTML_TAG = re.compile(r"<[^>]+>")
_URL = re.compile(r"https?://")
_PUNCTUATION = str.maketrans("", "", '.,;!?():"“”‘’')
_SINGLE_CHAR_JUNK = frozenset("_@&#")
# An apostrophe that starts or ends a whitespace-separated token.
_EDGE_APOSTROPHE = re.compile(r"(?<!\S)'|'(?!\S)")


@cache
def english_stop_words() -> frozenset[str]:
    """The SMART English stop-word list used by :func:`extract_keywords`."""
    words: list[str] = SmartStopList.words()
    return frozenset(words)


def _clean(token: str) -> str:
    # One leading and one trailing apostrophe of the original token go, then the other marks.
    start = 1 if token[0] == "'" else 0
    end = len(token) - 1 if len(token) > 1 and token[-1] == "'" else len(token)
    word = token[start:end].translate(_PUNCTUATION)
    return "" if word in _SINGLE_CHAR_JUNK else word


def _is_number(word: str) -> bool:
    return word.isascii() and word.isdigit()


def extract_keywords(text: str) -> list[str]:
    """Return the distinct keywords of ``text`` in order of first appearance.

    >>> extract_keywords("The quick-brown fox (a fox!) jumped over 42 lazy dogs.")
    ['quick-brown', 'fox', 'jumped', 'lazy', 'dogs']
    """
    stripped = js_trim(_HTML_TAG.sub("", text) if "<" in text else text)
    if not stripped:
        return []
    stop_words = english_stop_words()
    keywords: dict[str, None] = {}
    if _URL.search(stripped) is None and python_split_agrees(stripped):
        # No URL anywhere: the per-token rules can run on the whole text at C speed.
        text = _EDGE_APOSTROPHE.sub("", stripped.lower()).translate(_PUNCTUATION)
        return [
            word
            for word in dict.fromkeys(text.split())
            if word not in stop_words and word not in _SINGLE_CHAR_JUNK and not _is_number(word)
        ]
    for token in js_words(stripped):
        is_url = _URL.search(token) is not None
        word = token if is_url else _clean(token)
        if not word or _is_number(word):
            continue
        lowered = word.lower()
        if lowered not in stop_words:
            keywords.setdefault(word if is_url else lowered, None)
    return list(keywords)
