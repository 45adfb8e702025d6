"""``agentevals report`` over a large SQLite store: 1,000,000 score rows (200,000 runs x 5 scorers).

Run: ``uv run python benchmarks/bench_report.py [--runs N] [--scorers K] [--rounds R]``. Target on a
2-core machine: ``build_report`` (per scorer, entity and day, coverage and the 10 worst runs) under 2 s.

The store is built in a temporary directory with bulk SQL (a recursive CTE, no Python per row) into the
sinks' own tables (``create_statements``), the indexes created after the rows, then completed by
``ensure_schema`` (the rollup and histogram filled from the rows, their triggers added; timed apart):
runs spread over 30 days, 4 entities, ~100-character JSON inputs; per scorer 3% failed (no score, an
error type), 2% skipped (a skip reason), the rest scored uniformly in [0, 1).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from agentevals._evals._report import build_report, parse_since
from agentevals._store._row import COLUMNS, RUN_COLUMNS, SCHEMA_VERSION, SCHEMA_VERSION_KEY, tables
from agentevals._store._sqlite_schema import create_statements, ensure_schema

TABLE = "agentevals_scores"


def build_store(path: Path, runs: int, scorers: int) -> float:
    """Build the store; returns the seconds filling its rollup and histogram from the rows took."""
    t = tables(TABLE)
    statements = create_statements(t)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=OFF")
    for statement in statements:
        if statement.startswith("CREATE TABLE"):
            conn.execute(statement)
    conn.execute(f"INSERT INTO {t.meta} VALUES (?, ?)", (SCHEMA_VERSION_KEY, str(SCHEMA_VERSION)))
    conn.execute("BEGIN")
    base = "strftime('%Y-%m-%dT%H:%M:%S+00:00', 1793491200 + n * 13, 'unixepoch')"  # ~30 days
    run_values = {
        "run_id": "printf('run-%07d', n)",
        "created_at": base,
        "entity": "'agent-' || (n % 4)",
        "source": "'live'",
        "input": "json_quote(printf('question %d: how do I reset my password on the new portal?', n))",
        "output": "json_quote('go to settings, security, reset password and follow the e-mail link')",
        "metadata": "'{}'",
    }
    conn.execute(
        f"WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < {runs - 1}) "
        f"INSERT INTO {t.runs} ({', '.join(RUN_COLUMNS)}) SELECT "
        + ", ".join(run_values.get(c, "NULL") for c in RUN_COLUMNS)
        + " FROM seq"
    )
    roll = "(abs(random()) % 100)"
    score_values = {
        "id": "printf('%07d-%d', n, k)",
        "created_at": base,
        "run_id": "printf('run-%07d', n)",
        "scorer_id": "'scorer_' || k",
        "scorer_name": "'scorer_' || k",
        "scorer_version": "'v1'",
        "outcome": "CASE WHEN r < 3 THEN 'failed' WHEN r < 5 THEN 'skipped' ELSE 'scored' END",
        "skip_reason": "CASE WHEN r BETWEEN 3 AND 4 THEN 'no ground_truth' END",
        "score": "CASE WHEN r >= 5 THEN (abs(random()) % 10000) / 10000.0 END",
        "reason": "CASE WHEN r >= 5 THEN 'the answer covers ' || (n % 7) || ' of 7 points' END",
        "entity": "'agent-' || (n % 4)",
        "source": "'live'",
        "prompt_tokens": "120",
        "completion_tokens": "30",
        "cost_usd": "0.0001",
        "duration_ms": "12.5",
        "error_type": "CASE WHEN r < 3 THEN 'TimeoutError' END",
        "error_message": "CASE WHEN r < 3 THEN 'judge timed out' END",
        "metadata": "'{}'",
    }
    conn.execute(
        f"WITH RECURSIVE seq(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM seq WHERE n < {runs - 1}), "
        f"ks(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM ks WHERE k < {scorers - 1}) "
        f"INSERT INTO {t.scores} ({', '.join(COLUMNS)}) SELECT "
        + ", ".join(score_values.get(c, "NULL") for c in COLUMNS)
        + f" FROM (SELECT n, k, {roll} AS r FROM seq, ks)"
    )
    conn.execute("COMMIT")
    for statement in statements:
        if statement.startswith("CREATE UNIQUE INDEX") or statement.startswith("CREATE INDEX"):
            conn.execute(statement)
    conn.execute("ANALYZE")
    start = time.perf_counter()
    ensure_schema(conn, TABLE, str(path))
    filled = time.perf_counter() - start
    conn.close()
    return filled


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200_000)
    parser.add_argument("--scorers", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "agentevals.db"
        start = time.perf_counter()
        filled = build_store(path, args.runs, args.scorers)
        built = time.perf_counter() - start
        rows = args.runs * args.scorers
        print(f"store: {args.runs:,} runs, {rows:,} score rows, built in {built:.1f} s")
        print(f"rollup and histogram filled from the rows: {filled:.2f} s")
        times = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            report = build_report(path)
            times.append(time.perf_counter() - start)
        assert report.total == rows and len(report.worst) == 10 and report.runs == args.runs
        print(
            f"build_report: median {statistics.median(times):.2f} s "
            f"(rounds {', '.join(f'{t:.2f}' for t in times)}; target < 2 s)"
        )
        since = report.by_day[len(report.by_day) // 2].key["day"]
        start = time.perf_counter()

        build_report(path, since=parse_since(str(since)))
        print(f"build_report --since {since} (half the rows): {time.perf_counter() - start:.2f} s")
        inside = f"{since}T12:30"  # inside an hour: the rest of that hour is read from the rows
        start = time.perf_counter()
        build_report(path, since=parse_since(inside))
        print(f"build_report --since {inside} (half the rows): {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
