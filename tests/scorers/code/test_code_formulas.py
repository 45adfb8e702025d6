"""The code scorers' formulas alone (no run): tool-call verdicts, the similarity threshold, tone."""

from __future__ import annotations

from typing import Any

import pytest

from agentevals.scorers.code._checks import _similarity_score
from agentevals.scorers.code._tone import tone_closeness, tone_stability
from agentevals.scorers.code._tool_call_accuracy import (
    Call,
    called_expected_tool,
    called_in_order,
    tool_call_accuracy_code_score,
)


def _same_name(call: Call, name: str) -> bool:
    return call[0] == name


def _calls(*names: str) -> list[Call]:
    return [(name, {}) for name in names]


@pytest.mark.parametrize(
    ("calls", "strict", "expected"),
    [
        (_calls("search", "answer"), False, True),
        (_calls("search", "answer"), True, False),  # strict: the only call
        (_calls("search"), True, True),
        (_calls("answer"), False, False),
        (_calls(), False, False),
    ],
)
def test_the_expected_tool_is_called(calls: list[Call], strict: bool, expected: bool) -> None:
    assert called_expected_tool(calls, "search", strict, _same_name) is expected


@pytest.mark.parametrize(
    ("calls", "strict", "expected"),
    [
        (_calls("search", "log", "answer"), False, True),  # other calls in between
        (_calls("answer", "search", "answer"), False, True),  # a later search still precedes an answer
        (_calls("answer", "search"), False, False),
        (_calls("search", "log", "answer"), True, False),  # strict: exactly the order
        (_calls("search", "answer"), True, True),
        (_calls("search"), False, False),
    ],
)
def test_the_calls_follow_the_order(calls: list[Call], strict: bool, expected: bool) -> None:
    assert called_in_order(calls, ["search", "answer"], strict, _same_name) is expected


def test_a_matcher_may_also_check_the_arguments() -> None:
    def paris_weather(call: Call, name: str) -> bool:
        return call[0] == name and call[1].get("city") == "Paris"

    calls: list[Call] = [("weather", {"city": "Rome"}), ("weather", {"city": "Paris"})]
    assert called_expected_tool(calls, "weather", False, paris_weather)
    assert not called_expected_tool(calls[:1], "weather", False, paris_weather)


@pytest.mark.parametrize(
    ("has_calls", "tool_ok", "order_ok", "expected"),
    [
        (False, True, None, 0.0),  # no tool call at all
        (False, False, True, 0.0),
        (True, True, None, 1.0),  # no order expected: the tool decides
        (True, False, None, 0.0),
        (True, False, True, 1.0),  # an expected order decides, whatever the single tool
        (True, True, False, 0.0),
    ],
)
def test_tool_call_accuracy_code_score(
    has_calls: bool, tool_ok: bool, order_ok: bool | None, expected: float
) -> None:
    assert tool_call_accuracy_code_score(has_calls, tool_ok, order_ok) == expected


@pytest.mark.parametrize(
    ("similarity", "threshold", "expected"),
    [(0.7, None, 0.7), (0.0, None, 0.0), (0.7, 0.7, 1.0), (0.69, 0.7, 0.0), (1.0, 0.0, 1.0), (0.0, 0.0, 1.0)],
)
def test_the_similarity_check_passes_at_its_threshold(
    similarity: float, threshold: float | None, expected: float
) -> None:
    assert _similarity_score(similarity, threshold) == expected


def test_tone_closeness_is_one_minus_the_sentiment_difference() -> None:
    assert tone_closeness(0.5, -0.25) == {
        "score": 0.25,
        "response_sentiment": 0.5,
        "reference_sentiment": -0.25,
        "difference": 0.75,
    }
    assert tone_closeness(1.0, 1.0)["score"] == 1.0
    assert tone_closeness(2.0, -1.0)["score"] == 0.0  # a difference of 3, floored at 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # AFINN "love" +3 and "hate" -3 over three words each: sentiments +1 and -1, mean 0, variance 1
        ("I love it. I hate it.", {"score": 0.0, "avg_sentiment": 0.0, "sentiment_variance": 1.0}),
        # "good" +3 over one word, twice: no variance, however cheerful
        ("Good. Good.", {"score": 1.0, "avg_sentiment": 3.0, "sentiment_variance": 0.0}),
        # "love" +3 over three words and "ok" (not in AFINN) 0: mean 0.5, variance 0.25
        ("I love it. Ok.", {"score": 0.75, "avg_sentiment": 0.5, "sentiment_variance": 0.25}),
    ],
)
def test_tone_stability_is_one_minus_the_variance_of_sentence_sentiments(
    text: str, expected: dict[str, Any]
) -> None:
    assert tone_stability(text) == expected
