"""``agentevals view`` over a large SQLite store: 1,000,000 score rows (200,000 runs x 5 scorers).

Run: ``uv run python benchmarks/bench_view.py [--runs N] [--scorers K] [--rounds R] [--pages TEXT]``.
Target: the overview and a scorer page render in < 500 ms server side (each page without its slow parts,
which it fetches from its fragment once shown: the overview's covered runs per scorer and worst scores,
a scorer's breakdowns by agent model and scorer version; fragments are timed on their own), through the
ASGI app with Starlette's TestClient, no browser. The store is ``bench_report.build_store``'s (30 days,
4 entities, 3% failed, 2% skipped). Each page is timed cold (a new app without its start-up warm-up:
nothing computed yet), warm (the store unchanged: the page's numbers come from the app's cache) and
after a write (a row added: the last computation is served while one refresh runs in the background);
the baseline is one plain scan of the scores table (``SELECT COUNT(*), SUM(score)``) in the same run.
Last, the overview and a scorer page cold again with a threshold the store keeps for that scorer: a
minimum on a whole bin (the histogram counts the passes) and a maximum (its passes counted from its rows).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_report import TABLE, build_store


def timed(action: Callable[[], object], rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        action()
        out.append(time.perf_counter() - start)
    return out


def add_row(path: Path) -> None:
    """One more score row (what a live agent's sink does all day)."""
    with sqlite3.connect(path) as conn:
        conn.execute(
            f"INSERT INTO {TABLE} (id, created_at, run_id, scorer_id, scorer_name, outcome, score) "
            "VALUES (hex(randomblob(16)), strftime('%Y-%m-%dT%H:%M:%S+00:00', 'now'), 'run-0000001', "
            "'scorer_0', 'scorer_0', 'scored', 0.5)"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200_000)
    parser.add_argument("--scorers", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--pages", help="time only the pages whose name contains this text (e.g. 'scorer'), default all"
    )
    parser.add_argument(
        "--settle", type=float, default=8.0, help="seconds to let a background refresh end after a write"
    )
    args = parser.parse_args()
    from starlette.testclient import TestClient

    from agentevals._view._app import create_app

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.db"
        start = time.perf_counter()
        build_store(path, args.runs, args.scorers)
        took = time.perf_counter() - start
        print(f"built {args.runs * args.scorers:,} scores, {args.runs:,} runs in {took:.1f} s")

        def scan() -> None:
            with sqlite3.connect(path) as conn:
                conn.execute(f"SELECT COUNT(*), SUM(score) FROM {TABLE}").fetchone()

        baseline = statistics.median(timed(scan, args.rounds))
        print(f"baseline: one plain scan of the scores table {baseline * 1000:.0f} ms")
        pages = {
            "overview": "/",
            "overview fragment (coverage runs, worst)": "/fragments/overview",
            "overview, one entity": "/?entity=agent-1",
            "overview fragment, one entity": "/fragments/overview?entity=agent-1",
            "scorer": "/scorers/scorer_0",
            "scorer, hourly": "/scorers/scorer_0?bucket=hour",
            "scorer fragment (agent model, scorer version)": "/fragments/scorers/scorer_0",
            "runs (page 1)": "/runs",
            "runs, one scorer, page 100": "/runs?scorer=scorer_1&page=99",
            "run": "/runs/run-0001234",
        }
        print(
            "| page | cold (new app) | warm (store unchanged) | after a write | cold / scan | warm / scan |"
        )
        print("|---|---|---|---|---|---|")
        for name, url in pages.items():
            if args.pages and args.pages not in name:
                continue
            cold = []
            for _ in range(args.rounds):
                client = TestClient(create_app(path, warm=False))
                cold += timed(lambda: client.get(url).raise_for_status(), 1)  # noqa: B023
            warm = timed(lambda: client.get(url).raise_for_status(), args.rounds)  # noqa: B023
            written = []
            for _ in range(args.rounds):
                add_row(path)
                written += timed(lambda: client.get(url).raise_for_status(), 1)  # noqa: B023
                time.sleep(args.settle)  # let the background refresh finish before the next round
            c, w, a = (statistics.median(x) * 1000 for x in (cold, warm, written))
            print(
                f"| {name} | {c:.0f} ms | {w:.0f} ms | {a:.0f} ms | {c / baseline / 1000:.1f} | "
                f"{w / baseline / 1000:.1f} |"
            )
        if not args.pages or "stored" in args.pages:
            stored_thresholds(path, args.rounds, baseline)


def stored_thresholds(path: Path, rounds: int, baseline: float) -> None:
    """The overview and ``scorer_0``'s page cold with a stored threshold for it: a minimum, then a maximum."""
    from starlette.testclient import TestClient

    from agentevals._store._catalog_tables import ScorerInfo
    from agentevals._support._sync import run_sync
    from agentevals._view._app import create_app
    from agentevals.sinks import SQLiteSink

    for name, bounds in (("min 0.7", {"threshold_min": 0.7}), ("max 0.3", {"threshold_max": 0.3})):
        sink = SQLiteSink(path, table=TABLE)
        run_sync(sink.write_scorers([ScorerInfo("scorer_0", "scorer_0", "v", "live", **bounds)]))
        run_sync(sink.close())
        for page, url in (("overview", "/"), ("scorer", "/scorers/scorer_0")):
            cold = []
            for _ in range(rounds):
                client = TestClient(create_app(path, table=TABLE, warm=False))
                cold += timed(lambda: client.get(url).raise_for_status(), 1)  # noqa: B023
            c = statistics.median(cold) * 1000
            print(f"| {page}, stored threshold {name} | {c:.0f} ms | | | {c / baseline / 1000:.1f} | |")


if __name__ == "__main__":
    main()
