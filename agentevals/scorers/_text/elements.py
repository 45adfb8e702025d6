"""Content elements of a text, for the completeness scorer.

The elements are the nouns, the verbs in infinitive form, the topics and all
terms of a text (what the JavaScript NLP library ``compromise`` reports), split
into normalized words, distinct. Because the terms already contain every word, the
result is, in practice, *every word of the text, with verbs replaced by their base
form* (and a few surface forms kept for words compromise also sees as nouns).
:func:`extract_elements` computes that set:

1. contractions: ``n't`` → `` not`` (``can't`` → ``can not``, ``won't`` → ``will
   not``), ``'re 've 'll 'd 'm`` → ``are have will would am``, ``'s`` → ``is``
   after a pronoun (``it's``) and dropped otherwise (possessive ``fox's``);
2. Unicode NFD, Latin combining diacritics (U+0300–U+036F) removed, NFC again;
3. camelCase and ACRONYMWord boundaries split (``getUserName`` → ``get user
   name``) *before* lower-casing (after it, there would be no boundary left to
   split on);
4. lower-case; every character that is not a letter, digit or combining mark
   becomes a separator (so Greek, Cyrillic, ... words are kept, not only
   ``[a-z0-9]``, and each Han character or kana, written without spaces, is an
   element of its own);
5. each English word that can be an inflected verb is mapped to its base form:
   a word that is only a verb form (``walked``, ``went``, ``including``) is
   replaced by its base form; a word that can also be a noun, adjective or
   adverb (``runs``, ``stages``, ``saw``, ``amazing``) is read as a verb only
   after a pronoun, ``to``, ``not``/``never``, a modal or a form of *be*, *do* or
   *have* (``he runs`` → ``run``, ``were eating`` → ``eat``), and kept as it is
   otherwise (``the stages``). This small context rule stands in for a
   part-of-speech tagger; each word yields exactly one element, so an ambiguous
   word never weighs double in the score;
6. distinct elements in order of first appearance.

Choice of NLP library: verb base forms come from **lemminflect** (dictionary
lookup of ``getAllLemmas``, built from the SPECIALIST lexicon). Its data ships
inside the wheel, so nothing is downloaded at run time, lookups are fast
and cached, and it reports *every* part of speech a word can have, which is
exactly what rule 5 needs. spaCy or NLTK would give real part-of-speech tagging
but need model or corpus downloads; ``simplemma`` needs no download either, but
returns one lemma with no part of speech, so it would also reduce nouns
(``cats`` → ``cat``) and could not tell ``saw`` the tool from ``saw`` the verb.
Words unknown to the lexicon (names, jargon) are kept as they are.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import cache, lru_cache
from typing import cast

_NEGATIVE_CONTRACTION = re.compile(r"(?i)\b(can|won|shan|\w+?)n?['’]t\b")
_CLITIC = re.compile(r"(?i)\b(\w+)['’](s|re|ve|ll|d|m)\b")
_IRREGULAR_NEGATIONS = {"can": "can", "won": "will", "shan": "shall"}
_CLITICS = {"re": "are", "ve": "have", "ll": "will", "d": "would", "m": "am"}
# 's is "is" after these words and a possessive (dropped) after anything else.
_IS_HOSTS = frozenset(["it", "he", "she", "that", "what", "where", "who", "there", "here", "how"])
_CJK = re.compile("([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f])")
_LATIN_DIACRITICS = re.compile("[\u0300-\u036f]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_ASCII_WORD = re.compile("[a-z]+")
_OTHER_READINGS = ("NOUN", "PROPN", "ADJ", "ADV", "PRON", "DET", "ADP", "NUM")
# A word after one of these is read as a verb when it could be a verb or a noun.
# fmt: off
_VERB_CONTEXT = frozenset({
    "i", "you", "he", "she", "it", "we", "they", "who", "which", "that", "to", "not", "never",
    "can", "could", "will", "would", "shall", "should", "may", "might", "must",
    "am", "is", "are", "was", "were", "be", "been", "being", "do", "does", "did", "have", "has", "had",
})
# fmt: on


def _expand_negation(match: re.Match[str]) -> str:
    stem = match.group(1)
    return _IRREGULAR_NEGATIONS.get(stem.lower(), stem) + " not"


def _expand_clitic(match: re.Match[str]) -> str:
    host, clitic = match.group(1), match.group(2).lower()
    if clitic == "s":
        return f"{host} is" if host.lower() in _IS_HOSTS else host
    return f"{host} {_CLITICS[clitic]}"


def _expand_contractions(text: str) -> str:
    if "'" not in text and "’" not in text:
        return text
    return _CLITIC.sub(_expand_clitic, _NEGATIVE_CONTRACTION.sub(_expand_negation, text))


@lru_cache(maxsize=8192)
def _is_word_char(char: str) -> bool:
    return unicodedata.category(char)[0] in "LNM"


def _split_words(text: str) -> list[str]:
    if not text.isascii():
        # Han characters and kana are written without spaces: one element each.
        text = _CJK.sub(r" \1 ", text)
    separators = {ord(char): " " for char in set(text) if not _is_word_char(char)}
    return text.translate(separators).split()


def normalize(text: str) -> str:
    """Steps 1–4 of :func:`extract_elements`, returning one space-separated string.

    >>> normalize("Café getUserName HTTPServer don't it's Ann's 東京")
    'cafe get user name http server do not it is ann 東 京'
    """
    text = _expand_contractions(text)
    text = unicodedata.normalize("NFD", text)
    text = unicodedata.normalize("NFC", _LATIN_DIACRITICS.sub("", text))
    text = _CAMEL.sub(" ", text).lower()
    return " ".join(_split_words(text))


@cache
def _all_lemmas() -> Callable[[str], dict[str, tuple[str, ...]]]:
    # Imported on first use: lemminflect loads numpy and its tables, which only this scorer needs.
    from lemminflect import getAllLemmas  # type: ignore[import-untyped]

    return cast("Callable[[str], dict[str, tuple[str, ...]]]", getAllLemmas)


@lru_cache(maxsize=65536)
def word_readings(word: str) -> tuple[str, str | None]:
    """``(element, verb_base)`` for one normalized word (rule 5 of :func:`extract_elements`).

    ``element`` is the word, or its base form when the word can only be a verb;
    ``verb_base`` is set when the word can be a verb *or* something else, and is
    the element to use when the previous word makes the verb reading likely.

    >>> word_readings("walked"), word_readings("runs"), word_readings("data")
    (('walk', None), ('runs', 'run'), ('data', None))
    """
    if not _ASCII_WORD.fullmatch(word):
        return word, None
    lemmas = _all_lemmas()(word)
    verb = lemmas.get("VERB") or lemmas.get("AUX")
    if not verb or verb[0] == word:
        return word, None
    if any(pos in lemmas for pos in _OTHER_READINGS):
        return word, verb[0]
    return verb[0], None


def extract_elements(text: str) -> list[str]:
    """Distinct normalized words of ``text``, verbs in base form.

    >>> extract_elements("The runners ran, and getUserName returns results. He runs.")
    ['the', 'runners', 'run', 'and', 'get', 'user', 'name', 'returns', 'results', 'he']
    """
    elements: dict[str, None] = {}
    previous = ""
    for word in normalize(text).split(" "):
        if not word:
            continue
        element, verb_base = word_readings(word)
        if verb_base is not None and previous in _VERB_CONTEXT:
            element = verb_base
        elements.setdefault(element, None)
        previous = word
    return list(elements)
