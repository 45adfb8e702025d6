"""JavaScript string semantics that the ported text algorithms depend on.

The reference implementations (npm ``string-similarity``, ``keyword-extractor``,
``sentiment`` and the scorers built on them) run on JavaScript strings, where ``\\s`` is a
fixed set of whitespace characters, ``trim()`` strips exactly that set, and
``length`` and indexing count UTF-16 code units, so a character outside the Basic
Multilingual Plane (most emoji) counts as two. These helpers reproduce that exactly.

Python's ``str.split()`` agrees with JavaScript's ``\\s`` except on six characters
(U+001C–U+001F and U+0085 are whitespace only to Python, U+FEFF only to
JavaScript), so the helpers take the fast ``str.split()`` path unless one of those
is present.
"""

from __future__ import annotations

import re

_WS_CHARS = (
    "\t\n\v\f\r \u00a0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
JS_WHITESPACE = _WS_CHARS
"""Every character JavaScript's ``\\s`` matches."""
JS_WHITESPACE_CLASS = "[" + re.escape(_WS_CHARS) + "]"
"""A regex character class equal to JavaScript's ``\\s``."""

WHITESPACE_RUN = re.compile(JS_WHITESPACE_CLASS + "+")
"""JavaScript ``/\\s+/g``."""

_DISAGREEING = ("\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\ufeff")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def python_split_agrees(text: str) -> bool:
    """Whether ``str.split()`` and JavaScript ``\\s`` see the same whitespace in ``text``."""
    # Six substring scans (memchr) beat one regex scan of a character class.
    return not any(char in text for char in _DISAGREEING)


def js_trim(text: str) -> str:
    """``String.prototype.trim``: strip JavaScript whitespace from both ends.

    >>> js_trim("\\ufeff hi \\u3000")
    'hi'
    """
    return text.strip(_WS_CHARS)


def js_words(text: str) -> list[str]:
    """The non-empty pieces of ``text`` split on JavaScript whitespace.

    >>> js_words(" a\\u00a0b\\ufeffc \\x1c d ")
    ['a', 'b', 'c', '\\x1c', 'd']
    """
    if python_split_agrees(text):
        return text.split()
    return [word for word in WHITESPACE_RUN.split(text) if word]


def remove_whitespace(text: str) -> str:
    """JavaScript ``text.replace(/\\s+/g, '')``."""
    return "".join(js_words(text))


def collapse_whitespace(text: str) -> str:
    """JavaScript ``text.replace(/\\s+/g, ' ').trim()``."""
    return " ".join(js_words(text))


def _surrogate_pair(match: re.Match[str]) -> str:
    code = ord(match.group()) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


def utf16_units(text: str) -> str:
    """``text`` with each astral character split into its UTF-16 surrogate pair.

    ``len()``, slicing and equality on the result then behave like ``length``,
    ``substring`` and ``===`` on the JavaScript string.

    >>> len(utf16_units("a😀"))
    3
    """
    if text.isascii() or _ASTRAL.search(text) is None:
        return text
    return _ASTRAL.sub(_surrogate_pair, text)
