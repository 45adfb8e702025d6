"""Live records carry the run's metadata (merged with what the engine adds)."""

from __future__ import annotations

from pathlib import Path

from agentevals import Run, ScoringEngine, create_scorer
from agentevals._store._row import record_to_row
from agentevals.engine import DeliveryOptions
from agentevals.scorers import create_exact_match_scorer
from agentevals.sinks import MemorySink


def test_live_records_carry_the_run_metadata(dead_letter: Path) -> None:
    memory = MemorySink()
    failing = create_scorer(id="failing").generate_score(lambda **_: 1 / 0)
    engine = ScoringEngine(
        [create_exact_match_scorer(), failing],
        sinks=[memory],
        delivery=DeliveryOptions(dead_letter=dead_letter),
    )
    engine.submit(Run(run_id="r", input="q", output="a", ground_truth="a", metadata={"tenant": "t1"}))
    engine.submit(Run(run_id="s", input="q", output="a", metadata={"tenant": "t2"}))
    assert engine.shutdown()
    assert {(r.run_id, r.outcome, r.metadata["tenant"]) for r in memory.records} == {
        ("r", "scored", "t1"), ("r", "failed", "t1"), ("s", "skipped", "t2"), ("s", "failed", "t2")
    }  # fmt: skip
    assert all('"tenant":' in record_to_row(r)["metadata"] for r in memory.records)
