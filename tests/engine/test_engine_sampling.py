"""Deterministic ratio sampling: shares, stability, nesting, and the engine's per-scorer decisions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import length_scorer, runs

from agentevals import Run, Sampling, ScoringEngine
from agentevals._engine._sampling import sample_point
from agentevals.engine import DeliveryOptions, ScorerEntry
from agentevals.sinks import MemorySink

RUN_IDS = [f"run-{i:05d}" for i in range(10_000)]


def _picked(rate: float) -> set[str]:
    sampling = Sampling.ratio(rate)
    return {rid for rid in RUN_IDS if sampling.sampled(Run(run_id=rid, output="x"))}


@pytest.mark.parametrize("rate", [0.0, 1.0, 0.3])
def test_ratio_share_and_repeatability_over_10000_run_ids(rate: float) -> None:
    first = _picked(rate)
    assert abs(len(first) / len(RUN_IDS) - rate) <= 0.02
    assert _picked(rate) == first
    if rate == 0.0:
        assert first == set()
    if rate == 1.0:
        assert first == set(RUN_IDS)


def test_lower_rates_nest_inside_higher_rates() -> None:
    low, mid, high = _picked(0.05), _picked(0.3), _picked(0.7)
    assert low and low < mid < high


def test_trace_id_decides_when_present() -> None:
    sampling = Sampling.ratio(0.5)
    decisions = {sampling.sampled(Run(run_id=f"r{i}", trace_id="trace-7", output="x")) for i in range(200)}
    assert len(decisions) == 1
    assert sampling.sampled(Run(run_id="other", trace_id="trace-7", output="x")) == (
        sample_point("trace-7") < 0.5
    )


def test_same_decision_in_another_process_with_another_hash_seed() -> None:
    code = (
        "from agentevals._engine._sampling import sample_point; "
        "print(','.join(f'{sample_point(f\"run-{i}\"):.17f}' for i in range(50)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": "", "PYTHONPATH": str(Path.cwd())},
    ).stdout.strip()
    assert out == ",".join(f"{sample_point(f'run-{i}'):.17f}" for i in range(50))


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "0.5"])
def test_rate_outside_unit_interval_is_a_value_error_at_construction(bad: object) -> None:
    with pytest.raises(ValueError, match="rate"):
        ScoringEngine(
            {"s": {"scorer": length_scorer(), "sampling": {"type": "ratio", "rate": bad}}}, sinks=[]
        )
    with pytest.raises(ValueError):
        ScorerEntry(scorer=length_scorer(), sampling=bad)


def test_unknown_sampling_type_and_missing_rate_are_rejected() -> None:
    with pytest.raises(ValueError, match="unknown sampling type"):
        Sampling.of({"type": "percent", "rate": 0.1})
    with pytest.raises(ValueError, match="needs a rate"):
        Sampling.of({"type": "ratio"})


def test_engine_scorers_at_one_rate_sample_the_same_runs(dead_letter: Path) -> None:
    memory = MemorySink()
    engine = ScoringEngine(
        {
            "a": {"scorer": length_scorer("a"), "sampling": {"type": "ratio", "rate": 0.3}},
            "b": ScorerEntry(scorer=length_scorer("b"), sampling=Sampling.ratio(0.3)),
            "c": {"scorer": length_scorer("c"), "sampling": 0.1},
            "all": {"scorer": length_scorer("all"), "sampling": {"type": "none"}},
            "even": {"scorer": length_scorer("even"), "sampling": lambda run: run.run_id.endswith("0")},
        },
        sinks=[memory],
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    batch = runs(2000)
    accepted = [engine.submit(run) for run in batch]
    assert engine.shutdown(timeout=20)
    assert all(accepted)  # "all" samples every run
    by_scorer: dict[str, set[str]] = {}
    for record in memory.records:
        by_scorer.setdefault(record.scorer_id, set()).add(record.run_id)
    assert by_scorer["a"] == by_scorer["b"]
    assert by_scorer["c"] < by_scorer["a"]
    assert len(by_scorer["all"]) == 2000
    assert by_scorer["even"] == {r.run_id for r in batch if r.run_id.endswith("0")}
    stats = engine.stats()
    assert stats.sampled == {key: len(ids) for key, ids in by_scorer.items()}
    assert stats.sampled_out == 0 and stats.submitted == 2000


def test_run_sampled_out_by_every_scorer_is_not_accepted(dead_letter: Path) -> None:
    memory = MemorySink()
    engine = ScoringEngine(
        {"a": {"scorer": length_scorer(), "sampling": 0.0}},
        sinks=[memory],
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    assert [engine.submit(run) for run in runs(100)] == [False] * 100
    assert engine.shutdown(timeout=5)
    stats = engine.stats()
    assert (stats.submitted, stats.sampled_out, stats.accepted, stats.scored) == (100, 100, 0, 0)
    assert memory.records == []


def test_raising_custom_sampler_counts_as_not_sampled(dead_letter: Path) -> None:
    def sampler(run: Run) -> bool:
        raise RuntimeError("sampler bug")

    engine = ScoringEngine(
        {"a": {"scorer": length_scorer(), "sampling": sampler}},
        sinks=[],
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    assert engine.submit(Run(output="x")) is False
    assert engine.shutdown(timeout=5)
    assert engine.stats().sampled_out == 1
