"""AFINN-165 sentiment with the tokenization of the npm package ``sentiment`` 5.0.2.

The functions here compute ``new Sentiment().analyze(text).comparative`` by the
same rules:

* tokens: lower-case, ``\\n`` → space, each of ``. , / # ! ? $ % ^ & * ; : { } = _ ` " ~ ( )``
  → space, runs of two or more whitespace characters → one space, trim, split on
  ``' '`` (so an empty text is one empty token, and a single tab does not split);
* each token found in the lexicon (AFINN-165 plus 767 emoji) adds its value,
  negated when the previous token is an English negator (``not``, ``don't``, ...);
* ``comparative = score / number of tokens``.

The lexicons ship as data files in ``data/`` (see ``data/README.md``), loaded once
on first use; nothing is downloaded.

:func:`sentence_split` splits text into sentences the way the tone scorer does:
every match of ``[^.!?]+[.!?]+``, or the whole text when there is none (trailing
text after the last terminator is dropped).
"""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files

from agentevals.scorers._text._js import JS_WHITESPACE, JS_WHITESPACE_CLASS, js_trim

NEGATORS = frozenset(
    {"cant", "can't", "dont", "don't", "doesnt", "doesn't", "not", "non", "wont", "won't", "isnt", "isn't"}
)
"""A token that flips the sign of the next token's score."""

_PUNCTUATION = str.maketrans(dict.fromkeys('\n.,/#!?$%^&*;:{}=_`"~()', " "))
_WHITESPACE_RUNS = re.compile(JS_WHITESPACE_CLASS + "{2,}")
# Whitespace other than the space character: with none of it, tokens are simply str.split().
_OTHER_WHITESPACE = re.compile("[" + re.escape(JS_WHITESPACE.replace(" ", "")) + "\x1c-\x1f\x85]")
_SENTENCE = re.compile(r"[^.!?]+[.!?]+")


def _read_lexicon(name: str) -> dict[str, int]:
    text = (files("agentevals.scorers._text") / "data" / name).read_text(encoding="utf-8")
    lexicon: dict[str, int] = {}
    for line in text.splitlines():
        word, _, value = line.rpartition("\t")
        lexicon[word] = int(value)
    return lexicon


@cache
def lexicon() -> dict[str, int]:
    """The word → score table: AFINN-165 plus the emoji ratings."""
    return _read_lexicon("afinn-165.txt") | _read_lexicon("emoji-sentiment.txt")


def sentiment_tokens(text: str) -> list[str]:
    """Tokenize ``text`` as ``sentiment`` 5.0.2 does.

    >>> sentiment_tokens("Not bad,  really!\\nGood.")
    ['not', 'bad', 'really', 'good']
    >>> sentiment_tokens("")
    ['']
    """
    text = text.lower().translate(_PUNCTUATION)
    if _OTHER_WHITESPACE.search(text) is None:
        return text.split() or [""]
    return js_trim(_WHITESPACE_RUNS.sub(" ", text)).split(" ")


def sentiment_score(tokens: list[str]) -> int:
    """Sum of the lexicon values of ``tokens``, each negated after a negator."""
    table = lexicon()
    score = 0
    for index, token in enumerate(tokens):
        value = table.get(token)
        if value is None:
            continue
        if index > 0 and tokens[index - 1] in NEGATORS:
            value = -value
        score += value
    return score


def comparative_sentiment(text: str) -> float:
    """Sentiment score of ``text`` divided by its number of tokens.

    >>> comparative_sentiment("I love it")  # love = +3, three tokens
    1.0
    >>> comparative_sentiment("this is not good")  # good = +3, negated
    -0.75
    """
    tokens = sentiment_tokens(text)
    return sentiment_score(tokens) / len(tokens)


def sentence_split(text: str) -> list[str]:
    """Sentences of ``text``: each ``[^.!?]+[.!?]+`` match, or ``[text]`` if none.

    >>> sentence_split("Hi there. How are you?! fine")
    ['Hi there.', ' How are you?!']
    >>> sentence_split("no terminator")
    ['no terminator']
    """
    # Only text up to the last terminator can be part of a sentence. Searching the rest would cost
    # O(n²): at each position ``[^.!?]+`` runs to the end, then fails for want of a terminator.
    end = max(text.rfind("."), text.rfind("!"), text.rfind("?"))
    return (_SENTENCE.findall(text, 0, end + 1) if end >= 0 else []) or [text]
