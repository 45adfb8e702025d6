"""The viewer's pure parts: statistics from binned scores and transcripts from stored runs."""

from __future__ import annotations

import json

from agentevals._view._stats import compare, histogram, mean, percentile
from agentevals._view._transcript import context, transcript


def test_percentiles_and_mean_from_bins() -> None:
    bins = [(0.2, 1), (0.4, 1), (0.6, 1), (0.8, 1), (1.0, 6)]
    assert [percentile(bins, q) for q in (0.1, 0.2, 0.5, 0.9)] == [0.2, 0.4, 1.0, 1.0]
    assert mean(bins) == 0.8
    assert percentile([], 0.5) is None and mean([]) is None


def test_histogram_keeps_every_score() -> None:
    edges, counts = histogram([(0.0, 2), (0.5, 3), (1.0, 4)], buckets=4)
    assert edges == [0.0, 0.25, 0.5, 0.75] and counts == [2, 0, 3, 4]
    edges, counts = histogram([(-3.0, 1), (7.0, 1)], buckets=5)  # outside 0..1: its own range
    assert edges[0] == -3.0 and sum(counts) == 2
    assert histogram([(2.0, 5)]) == ([2.0], [5])


def test_compare_hints() -> None:
    same = compare((50, 40.0, 34.0), (50, 40.0, 34.0))
    assert same.delta == 0 and same.hint == "within noise"
    assert compare((1, 1.0, 1.0), (10, 5.0, 3.0)).hint == "too few scores"
    assert compare((0, None, None), (10, 5.0, 3.0)).mean_a is None
    certain = compare((5, 5.0, 5.0), (5, 0.0, 0.0))  # all 1s against all 0s: no spread
    assert certain.hint == "significant" and certain.t is None and certain.delta == -1.0


def test_transcripts_of_the_stored_shapes() -> None:
    openai_style = {
        "input": json.dumps([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]),
        "output": json.dumps(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "1", "function": {"name": "search", "arguments": '{"q": "hi"}'}}],
            }
        ),
        "context": json.dumps(["doc one", {"id": 2}]),
    }
    entries = transcript(openai_style)
    assert [e.role for e in entries] == ["system", "user", "assistant"]
    assert entries[2].tool_calls[0].name == "search" and json.loads(entries[2].tool_calls[0].args) == {
        "q": "hi"
    }
    assert context(openai_style) == ["doc one", '{\n  "id": 2\n}']
    odd = transcript({"input": json.dumps({"question": "why?"}), "output": json.dumps(42), "context": None})
    assert [(e.role, e.content) for e in odd] == [("user", '{\n  "question": "why?"\n}'), ("assistant", "42")]
    assert transcript({"input": None, "output": None}) == []
