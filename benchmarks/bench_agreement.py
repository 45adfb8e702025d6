"""``agreement(...)`` with its corrected pass rate over a large SQLite store: 1,000,000 score rows
(200,000 runs x 5 scorers) and 10,000 people's labels of one scorer's runs.

Run: ``uv run python benchmarks/bench_agreement.py [--runs N] [--labels L] [--rounds R] [--rebuild]``.
Target on a 2-core machine: under 1 s.

The store is built once with ``bench_report.build_store`` (bulk SQL into the sinks' own tables) and kept
in the temporary directory (``agentevals-bench-agreement-*.db``; ``--rebuild`` makes it again). The labels
are written by SQL too: one per scored run of ``scorer_0`` until there are ``L``, 80% pass/fail labels
agreeing with the judge's verdict 85% of the time, 20% numeric labels near the score. Each round opens
the store by its address and computes the agreement as a caller of ``agentevals.evals.agreement`` would.
Two baselines, measured in the same run on new connections: ``SELECT count(*)`` over the scores table,
and the pass count ``agentevals report`` reads for the scorer's pass rate (the raw rate alone).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_report import TABLE, build_store

from agentevals._model._thresholds import Threshold
from agentevals._store._report_reads import pass_counts
from agentevals._store._row import tables
from agentevals._store._store import open_store
from agentevals.evals import agreement

SCORER = "scorer_0"


def add_labels(path: Path, count: int) -> None:
    """``count`` labels of ``SCORER``'s scored runs (see the module's docstring)."""
    t = tables(TABLE)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    # MATERIALIZED: each row's one draw r decides both its kind and its value.
    conn.execute(
        f"WITH picked AS MATERIALIZED (SELECT run_id, scorer_id, score, abs(random()) % 100 AS r "
        f"FROM {t.scores} WHERE scorer_id = ? AND outcome = 'scored' AND score IS NOT NULL LIMIT ?) "
        f"INSERT INTO {t.labels} (label_id, run_id, name, value, kind, labeller, note, created_at) "
        "SELECT lower(hex(randomblob(16))), run_id, scorer_id, "
        "CASE WHEN r < 80 THEN CASE WHEN (score >= 0.5) = (abs(random()) % 100 < 85) THEN 1.0 ELSE 0.0 END "
        "ELSE max(0.0, min(1.0, score + (abs(random()) % 200 - 100) / 1000.0)) END, "
        "CASE WHEN r < 80 THEN 'pass_fail' ELSE 'score' END, "
        "'labeller-' || (abs(random()) % 5), NULL, '2026-12-01T00:00:00+00:00' FROM picked",
        (SCORER, count),
    )
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    conn.close()


def store_path(runs: int, labels: int, rebuild: bool) -> Path:
    """The cached store (built when missing or when ``rebuild``)."""
    path = Path(tempfile.gettempdir()) / f"agentevals-bench-agreement-{runs}-{labels}.db"
    if path.exists() and not rebuild:
        print(f"store: {path} (cached; --rebuild makes it again)")
        return path
    building = path.with_name(path.name + ".building")  # renamed once complete: no half-built cache
    for stale in path.parent.glob(path.name + "*"):
        stale.unlink()
    start = time.perf_counter()
    build_store(building, runs, 5)
    add_labels(building, labels)
    building.rename(path)
    print(f"store: {path}, built in {time.perf_counter() - start:.1f} s")
    return path


def timed(rounds: int, work: Callable[[], object]) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return times


def count_scores(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])
    finally:
        conn.close()


def report_pass_count(path: Path) -> tuple[int, int, int]:
    with open_store(path, read_only=True) as store:
        half = Threshold(min=0.5)
        return pass_counts(store.reading, scorer_id=SCORER, threshold=half, since=None, source=None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200_000)
    parser.add_argument("--labels", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    path = store_path(args.runs, args.labels, args.rebuild)
    rows = count_scores(path)
    found = agreement(path, SCORER)
    (version,) = found.versions
    print(
        f"{rows:,} score rows, {found.labels:,} labels: n={version.n:,}, {version.confusion}, "
        f"kappa {version.kappa}, MAE {version.numeric.mae if version.numeric else '-'}; "
        f"raw {version.raw.passed:,}/{version.raw.scored:,}, corrected {version.corrected_text}"
    )
    counted = statistics.median(timed(args.rounds, lambda: count_scores(path)))
    passed = statistics.median(timed(args.rounds, lambda: report_pass_count(path)))
    times = timed(args.rounds, lambda: agreement(path, SCORER))
    median = statistics.median(times)
    print(f"baseline SELECT count(*) over the scores: median {counted:.3f} s")
    print(f"baseline the report's pass count of {SCORER}: median {passed:.3f} s")
    rounds = ", ".join(f"{t:.3f}" for t in times)
    print(
        f"agreement + corrected rate: median {median:.3f} s (rounds {rounds}; {median / counted:.1f}x the "
        f"count, {median / passed:.2f}x the pass count; target < 1 s)"
    )


if __name__ == "__main__":
    main()
