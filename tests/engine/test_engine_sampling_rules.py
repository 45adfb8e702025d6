"""Rule sampling in a real engine: 10,000 runs, per-rule shares against the rates, the counts in
``stats().sampled_by_rule``, lazily built runs, determinism across engines, a raising predicate."""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import accounted, length_scorer

from agentevals import Run, ScoringEngine
from agentevals._engine._sampling import sample_point
from agentevals.engine import DeliveryOptions, Rule
from agentevals.sinks import MemorySink

POLICY: dict[str, Any] = {
    "type": "rules",
    "rules": [
        {"when": {"any": [{"error": True}, {"tool_failed": True}]}, "rate": 1.0, "name": "failures"},
        {"when": {"metadata.feedback": "negative"}, "rate": 1.0, "name": "complaints"},
        {"when": {"entity": "checkout"}, "rate": 0.2, "name": "checkout"},
        {"when": {"latency_ms": {"gt": 2000}}, "rate": 0.5, "name": "slow"},
        {"rate": 0.01, "name": "rest"},
    ],
}
RATES = {rule["name"]: rule["rate"] for rule in POLICY["rules"]}
TOOL_FAILED = [
    {"role": "assistant", "content": "", "tool_invocations": [{"tool_name": "pay", "state": "error"}]}
]


def traffic(n: int = 10_000) -> tuple[list[Run], dict[str, str]]:
    """``n`` runs, every tenth errored (some errored runs also carry negative feedback: the first rule
    wins), plus tool failures, complaints, checkout and slow runs; and the rule each one must match."""
    batch: list[Run] = []
    expected: dict[str, str] = {}
    for i in range(n):
        fields: dict[str, Any] = {"run_id": f"run-{i:05d}", "input": f"q{i}", "output": f"a{i}"}
        if i % 10 == 0:
            fields["error"] = "TimeoutError: agent timed out"
            expected[fields["run_id"]] = "failures"
        elif i % 50 == 3:
            fields["output"] = TOOL_FAILED
            expected[fields["run_id"]] = "failures"
        elif i % 20 == 7:
            expected[fields["run_id"]] = "complaints"
        elif i % 3 == 1:
            fields["entity"] = "checkout"
            expected[fields["run_id"]] = "checkout"
        elif i % 4 == 2:
            fields["duration_ms"] = 2500.0
            expected[fields["run_id"]] = "slow"
        else:
            fields["entity"] = "search"
            fields["duration_ms"] = 300.0
            expected[fields["run_id"]] = "rest"
        if i % 20 in (0, 7):  # complaints, also on errored runs
            fields["metadata"] = {"feedback": "negative"}
        batch.append(Run(**fields))
    return batch, expected


def within_binomial(sampled: int, matched: int, rate: float, sds: float = 4.0) -> bool:
    return abs(sampled - matched * rate) <= sds * math.sqrt(matched * rate * (1 - rate))


def test_10000_runs_per_rule_shares_follow_the_rates(dead_letter: Path) -> None:
    memory = MemorySink()
    engine = ScoringEngine(
        {
            "judge": {"scorer": length_scorer("judge"), "sampling": POLICY, "score_errors": True},
            "cheap": {"scorer": length_scorer("cheap"), "sampling": {"type": "none"}},
        },
        sinks=[memory],
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    batch, expected = traffic()
    assert all(engine.submit(run) for run in batch)
    assert engine.flush(timeout=60)
    stats = accounted(engine, "rules")
    assert engine.shutdown(timeout=10)

    errored = {r.run_id for r in batch if r.error is not None}
    assert len(errored) == 1000
    judged = {r.run_id for r in memory.records if r.scorer_id == "judge"}
    assert errored <= judged, "every errored run is sampled"
    # Exactly the runs whose first matching rule samples them, by the run's point.
    assert judged == {rid for rid, rule in expected.items() if sample_point(rid) < RATES[rule]}

    by_rule = stats.sampled_by_rule["judge"]
    assert list(by_rule) == list(RATES)
    for name, rate in RATES.items():
        matched = sum(1 for rule in expected.values() if rule == name)
        assert by_rule[name]["matched"] == matched, name
        if rate == 1.0:
            assert by_rule[name]["sampled"] == matched, name
        else:
            assert within_binomial(by_rule[name]["sampled"], matched, rate), (name, by_rule[name], matched)
    assert sum(c["sampled"] for c in by_rule.values()) == stats.sampled["judge"] == len(judged)
    assert set(stats.sampled_by_rule) == {"judge"}, "only scorers with rules are listed"
    assert stats.sampled["cheap"] == 10_000


def test_callable_rules_and_runs_matching_no_rule(dead_letter: Path) -> None:
    memory = MemorySink()
    rules = [
        Rule(when=lambda run: run.entity == "vip", rate=1.0, name="vip"),
        Rule(when={"entity": "checkout"}, rate=0.0),
    ]
    engine = ScoringEngine(
        {"s": {"scorer": length_scorer(), "sampling": rules}},
        sinks=[memory],
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    entities = ["vip", "checkout", "search"] * 30
    accepted = [engine.submit(Run(run_id=f"r{i}", output="x", entity=e)) for i, e in enumerate(entities)]
    assert engine.shutdown(timeout=10)
    assert accepted == [e == "vip" for e in entities]
    stats = accounted(engine)
    assert stats.sampled_by_rule == {
        "s": {"vip": {"matched": 30, "sampled": 30}, "entity=checkout": {"matched": 30, "sampled": 0}}
    }
    assert stats.sampled_out == 60, "unmatched runs and rate-0 runs are not sampled"


def test_same_run_id_same_decision_in_two_engines(dead_letter: Path, tmp_path: Path) -> None:
    decisions = []
    for n in range(2):
        memory = MemorySink()
        engine = ScoringEngine(
            {"s": {"scorer": length_scorer(), "sampling": POLICY}},
            sinks=[memory],
            delivery=DeliveryOptions(dead_letter=tmp_path / f"dl{n}.jsonl"),
        )
        batch, _ = traffic(3000)
        for run in reversed(batch) if n else batch:  # another order: the decision is the run's own
            engine.submit(run)
        assert engine.shutdown(timeout=30)
        decisions.append({r.run_id for r in memory.records})
        assert decisions[-1]
    assert decisions[0] == decisions[1]


def test_lazy_runs_are_built_for_the_rules(dead_letter: Path) -> None:
    memory = MemorySink()
    engine = ScoringEngine(
        {"s": {"scorer": length_scorer(), "sampling": [{"when": {"entity": "checkout"}, "rate": 1.0}]}},
        sinks=[memory],
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )

    def broken() -> Run:
        raise RuntimeError("cannot build")

    assert engine.submit_lazy(lambda: Run(run_id="a", output="x", entity="checkout"), run_id="a")
    assert not engine.submit_lazy(lambda: Run(run_id="b", output="x", entity="search"), run_id="b")
    assert engine.submit_lazy(broken, run_id="c"), "a run that cannot be built still gets its error record"
    assert engine.shutdown(timeout=10)
    assert sorted((r.run_id, r.outcome) for r in memory.records) == [("a", "scored"), ("c", "failed")]
    assert accounted(engine).sampled_by_rule == {"s": {"entity=checkout": {"matched": 1, "sampled": 1}}}


def test_a_raising_predicate_counts_as_not_sampled_and_is_logged(
    dead_letter: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(run: Run) -> bool:
        raise KeyError("tier")

    engine = ScoringEngine(
        {
            "s": {"scorer": length_scorer("s"), "sampling": [Rule(when=broken, rate=1.0)]},
            "all": length_scorer("all"),
        },
        sinks=[],
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    with caplog.at_level(logging.ERROR, logger="agentevals.engine"):
        assert engine.submit(Run(output="x"))
    assert engine.shutdown(timeout=10)
    stats = accounted(engine)
    assert stats.sampled == {"s": 0, "all": 1}
    assert stats.sampled_by_rule == {"s": {"broken": {"matched": 0, "sampled": 0}}}
    assert "a sampling rule of scorer s raised" in caplog.text
