"""extract_elements: normalized words of a text, verbs in base form."""

from __future__ import annotations

import pytest

from agentevals.scorers._text import extract_elements
from agentevals.scorers._text.elements import normalize, word_readings


def test_every_word_with_verbs_in_base_form() -> None:
    # Same element set compromise gives Mastra for this sentence.
    assert extract_elements("The quick brown fox jumps over the lazy dog") == [
        "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog",
    ]  # fmt: skip
    assert extract_elements("The cat sat on the mat.") == ["the", "cat", "sit", "on", "mat"]
    assert extract_elements("She went home and walked the dog") == [
        "she", "go", "home", "and", "walk", "the", "dog",
    ]  # fmt: skip


def test_ambiguous_words_read_as_verbs_only_after_a_verb_context() -> None:
    assert word_readings("runs") == ("runs", "run")
    assert word_readings("walked") == ("walk", None)
    assert word_readings("photosynthesis") == ("photosynthesis", None)
    assert extract_elements("the stages") == ["the", "stages"]
    assert extract_elements("he stages it") == ["he", "stage", "it"]
    assert extract_elements("they were eating") == ["they", "be", "eat"]
    assert extract_elements("to leaves") == ["to", "leave"]


def test_contractions() -> None:
    assert extract_elements("She doesn't want to go, but he isn't sure.") == [
        "she", "do", "not", "want", "to", "go", "but", "he", "be", "sure",
    ]  # fmt: skip
    assert normalize("can't won't shan't it's Ann's we're I'm they'll you'd we've") == (
        "can not will not shall not it is ann we are i am they will you would we have"
    )
    assert normalize("don’t") == "do not"  # typographic apostrophe


def test_camel_case_is_split_before_lowercasing() -> None:
    assert normalize("getUserName HTTPServer iPhone15") == "get user name http server i phone15"
    assert extract_elements("userName") == ["user", "name"]


def test_diacritics_and_separators() -> None:
    assert extract_elements("Café crème brûlée, naïve résumé!") == [
        "cafe", "creme", "brulee", "naive", "resume",
    ]  # fmt: skip
    assert extract_elements("light-dependent snake_case a/b") == [
        "light", "dependent", "snake", "case", "a", "b",
    ]  # fmt: skip


def test_non_latin_scripts_are_kept() -> None:
    assert extract_elements("Привет, мир! Γειά σου") == ["привет", "мир", "γεια", "σου"]
    # Han characters and kana become one element each.
    assert extract_elements("東京は日本") == ["東", "京", "は", "日", "本"]
    assert extract_elements("서울 시장") == ["서울", "시장"]  # Hangul is written with spaces


@pytest.mark.parametrize("text", ["", "   \n  ", "!!! ... ---", "😀 🎉"])
def test_texts_without_words(text: str) -> None:
    assert extract_elements(text) == []


def test_100_kb_input() -> None:
    text = "Running runners ran quickly while others walked. " * 2_050
    assert len(text) > 100_000
    assert extract_elements(text) == ["running", "runners", "run", "quickly", "while", "others", "walk"]
