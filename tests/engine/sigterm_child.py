"""A service with 10,000 runs queued, waiting for SIGTERM (run by the SIGTERM tests as a subprocess).

argv: DB_PATH MODE, MODE one of "default" (no handler of its own), "app" (the app installed a handler
that prints the stats and exits 0), "off" (ExitOptions(handle_sigterm=False)).
"""

from __future__ import annotations

import logging
import signal
import sys
import time
from typing import Any

from agentevals import Run, ScoringEngine, create_scorer
from agentevals.engine import DeliveryOptions, ExitOptions, QueueOptions
from agentevals.sinks import SQLiteSink

RUNS = 10_000


def main(db: str, mode: str) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s %(message)s")
    engine: ScoringEngine | None = None

    def app_handler(signum: int, frame: Any) -> None:
        assert engine is not None
        print("app handler called; stats:", engine.stats(), flush=True)
        sys.exit(0)

    if mode == "app":
        signal.signal(signal.SIGTERM, app_handler)
    scorer = create_scorer(id="len").generate_score(lambda run: float(len(run.output_text) < 50))
    engine = ScoringEngine(
        scorer,
        sinks=[SQLiteSink(db)],
        # Nothing is scored until the flush: all 10,000 wait in the queue.
        queue=QueueOptions(size=50_000, linger=3600),
        delivery=DeliveryOptions(dead_letter=db + ".dead.jsonl"),
        exit=ExitOptions(timeout=60, handle_sigterm=mode != "off"),
    )
    for i in range(RUNS):
        engine.submit(Run(run_id=f"run-{i}", input=f"question {i}", output=f"answer {i}"))
    assert engine.stats().queued == RUNS
    print("ready", flush=True)
    time.sleep(120)
    print("never signalled", flush=True)


if __name__ == "__main__":  # pytest imports this module for its doctests: do nothing then
    main(sys.argv[1], sys.argv[2])
