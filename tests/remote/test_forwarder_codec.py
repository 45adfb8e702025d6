"""The run message both sides share: a run round-trips through JSON unchanged; bad payloads are a
clear ValueError."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from agentevals import Run
from agentevals._remote._codec import VERSION, run_from_message, run_message


def _rich_run() -> Run:
    conversation = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "earlier"},
        {"role": "assistant", "content": "noted"},
        {"role": "user", "content": "weather in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "18C"},
        {"role": "assistant", "content": "18C in Paris", "reasoning": "looked it up"},
    ]
    return Run.from_messages(
        conversation,
        run_id="run-1",
        trace_id="trace-1",
        entity="weather-bot",
        ground_truth={"temp": 18},
        request_context={"user": "u1", "tier": 2},
        context=["Paris is in France"],
        expected_trajectory=["weather"],
        error="partial failure",
        started_at=datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
        duration_ms=12.5,
        metadata={
            "models": ["gpt-4o"],
            "usage": {"input_tokens": 10},
            "span_id": "s-9",
            "nested": [1, {"a": None}],
        },
    )


def _through_json(payload: dict[str, Any]) -> Any:
    return json.loads(json.dumps(payload))


def test_a_run_round_trips_through_json_unchanged() -> None:
    run = _rich_run()
    accepted = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)
    message = _through_json(run_message(run, ["relevancy", "tone"], entity="default", accepted_at=accepted))
    decoded = run_from_message(message)
    assert decoded.run == run
    assert decoded.run.output_messages[0].tool_invocations[0].args == {"city": "Paris"}
    assert decoded.scorer_keys == ("relevancy", "tone")
    assert decoded.entity == "default"
    assert decoded.accepted_at == accepted
    assert message["v"] == VERSION


def test_plain_values_and_an_empty_run_round_trip() -> None:
    for run in (Run(input="q", output="a"), Run(input={"q": 1}, output=[1, 2]), Run()):
        assert run_from_message(_through_json(run_message(run, [], entity=None))).run == run


def test_a_value_json_cannot_hold_travels_as_its_repr() -> None:
    class Opaque:
        def __repr__(self) -> str:
            return "<opaque>"

    run = Run(input="q", output="a", metadata={"thing": Opaque()})
    decoded = run_from_message(_through_json(run_message(run, ["s"], entity=None)))
    assert decoded.run.metadata == {"thing": "<opaque>"}


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ("text", "JSON object"),
        ({"run": {}}, "version 'v'"),
        ({"v": VERSION + 1, "run": {}, "scorers": []}, "newer than this release"),
        ({"v": 1, "scorers": []}, "without a 'run'"),
        ({"v": 1, "run": {}, "scorers": "s"}, "'scorers' must be a list"),
        ({"v": 1, "run": {}, "scorers": [], "entity": 3}, "'entity' must be text"),
        ({"v": 1, "run": {"run_id": "r", "bogus": 1}, "scorers": [], "accepted_at": "2026-01-01"}, "'r'"),
        ({"v": 1, "run": {}, "scorers": [], "accepted_at": "yesterday"}, "cannot be read"),
    ],
)
def test_a_bad_or_newer_payload_is_a_clear_value_error(payload: Any, expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        run_from_message(payload)
