"""Route live scores to PostgreSQL (and the log). Needs `pip install 'agentevals-core[postgres]'`.

AGENTEVALS_POSTGRES_URL is a libpq connection string or URL (default: a local `test` database).
"""

from __future__ import annotations

import logging
import os

from agentevals import Run, ScoringEngine
from agentevals.scorers import create_exact_match_scorer, create_levenshtein_scorer
from agentevals.sinks import LoggingSink, PostgresSink

DEFAULT_URL = "host=127.0.0.1 port=5432 dbname=test user=postgres connect_timeout=3"


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    table = os.environ.get("AGENTEVALS_POSTGRES_TABLE", "agentevals_scores")
    sink = PostgresSink(os.environ.get("AGENTEVALS_POSTGRES_URL", DEFAULT_URL), table=table)
    engine = ScoringEngine(
        [create_exact_match_scorer(), create_levenshtein_scorer()], sinks=[sink, LoggingSink()]
    )
    engine.submit(Run(input="Capital of France?", output="Paris", ground_truth="Paris"))
    engine.submit(Run(input="Capital of Peru?", output="Lima, Peru", ground_truth="Lima"))
    ok = engine.shutdown(timeout=30)
    stats = engine.stats()
    print(f"scored={stats.scored} sink_errors={stats.sink_errors} dead_lettered={stats.dead_lettered}")
    if not ok or stats.sink_errors or stats.dead_lettered:
        raise SystemExit("could not write every score to PostgreSQL; check AGENTEVALS_POSTGRES_URL")


if __name__ == "__main__":
    main()
