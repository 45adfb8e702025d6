"""The run message both sides share: a run round-trips through JSON unchanged; bad payloads are a
clear ValueError."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from agentevals import Run
from agentevals._engine._forward._codec import VERSION, batch_text, run_entry_text, runs_from_message


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


def _message(run: Run, scorer_keys: list[str], entity: str | None) -> str:
    return batch_text([run_entry_text(run, scorer_keys, entity=entity)])


def test_a_run_round_trips_through_json_unchanged() -> None:
    run = _rich_run()
    (decoded,) = runs_from_message(_message(run, ["relevancy", "tone"], entity="default"))
    assert decoded.run == run
    assert decoded.run.output_messages[0].tool_invocations[0].args == {"city": "Paris"}
    assert decoded.scorer_keys == ("relevancy", "tone")
    assert decoded.entity == "default"


def test_the_accepted_time_travels_with_the_run() -> None:
    accepted = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)
    entry = {**json.loads(run_entry_text(Run(), [], entity=None)), "accepted_at": accepted.isoformat()}
    assert runs_from_message({"v": VERSION, "runs": [entry]})[0].accepted_at == accepted


def test_plain_values_and_an_empty_run_round_trip() -> None:
    for run in (Run(input="q", output="a"), Run(input={"q": 1}, output=[1, 2]), Run()):
        assert runs_from_message(_message(run, [], entity=None))[0].run == run


def test_a_value_json_cannot_hold_travels_as_its_repr() -> None:
    class Opaque:
        def __repr__(self) -> str:
            return "<opaque>"

    run = Run(input="q", output="a", metadata={"thing": Opaque()})
    (decoded,) = runs_from_message(_message(run, ["s"], entity=None))
    assert decoded.run.metadata == {"thing": "<opaque>"}


def test_a_batch_carries_its_runs_in_order_with_their_own_scorers() -> None:
    runs = [_rich_run(), Run(run_id="plain", input="q", output="a"), Run(run_id="odd", input="lone \ud800")]
    texts = [run_entry_text(run, [f"s{i}"], entity="bot") for i, run in enumerate(runs)]
    message = batch_text(texts)
    assert json.loads(message)["v"] == VERSION == 2
    decoded = runs_from_message(message)
    assert [d.run for d in decoded] == runs
    assert [d.scorer_keys for d in decoded] == [("s0",), ("s1",), ("s2",)]
    assert runs_from_message(json.loads(message)) == decoded  # as JSON data too
    assert runs_from_message(batch_text([])) == []


UNKNOWN_FIELD = {"run_id": "r", "bogus": 1}


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ("not json", "must be JSON"),
        ('"text"', "JSON object"),
        ({"v": 2, "run": {}}, "without a 'runs' list"),
        ({"v": 2, "runs": [3]}, "entry is a JSON object"),
        ({"run": {}}, "version 'v'"),
        ({"v": VERSION + 1, "run": {}, "scorers": []}, "newer than this release"),
        ({"v": 1, "run": {}, "scorers": [], "accepted_at": "2026-01-01"}, "version 'v' is 1, not 2"),
        ({"v": 2, "runs": [{"scorers": []}]}, "without a 'run'"),
        ({"v": 2, "runs": [{"run": {}, "scorers": "s"}]}, "'scorers' must be a list"),
        ({"v": 2, "runs": [{"run": {}, "scorers": [], "entity": 3}]}, "'entity' must be text"),
        (
            {
                "v": 2,
                "runs": [{"run": {"run_id": "r", "bogus": 1}, "scorers": [], "accepted_at": "2026-01-01"}],
            },
            "'r'",
        ),
        ({"v": 2, "runs": [{"run": {}, "scorers": [], "accepted_at": "yesterday"}]}, "cannot be read"),
    ],
)
def test_a_bad_or_newer_payload_is_a_clear_value_error(payload: Any, expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        runs_from_message(payload)
