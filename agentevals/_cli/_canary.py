"""``agentevals canary --db STORE --scorer SPEC``: re-judge the pinned labelled runs with the scorer as
it is configured now, store the epoch (``source="canary"``) and warn when its agreement with the labels
left the previous epoch's interval (see ``agentevals._trust._canary``).

Runs once, or with ``--every 1h`` (s, m, h, d) again and again until interrupted. Exit codes: 0 no
drift, 3 drift (once), 2 a bad option, store or scorer, 130 interrupted (``--every``).
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentevals._cli._webhook import TIMEOUT, check_webhook, post_alert
from agentevals._scoring._scorer import Scorer

DRIFT = 3
INTERRUPTED = 130
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

ScorerLoader = Callable[[str, str | None], Scorer]
"""Builds the scorer of a ``--scorer`` spec and ``--judge`` model (``agentevals.cli.load_scorer``)."""


def add_canary_command(sub: Any, load_scorer: ScorerLoader) -> None:
    """Add ``canary`` to the subparsers ``sub``; ``load_scorer`` reads ``--scorer``."""
    canary = sub.add_parser(
        "canary", help="re-judge labelled runs with a scorer as it is now and warn when it drifts"
    )
    canary.add_argument("--db", required=True, help="a SQLite file or a postgresql:// URL")
    canary.add_argument(
        "--scorer",
        required=True,
        metavar="NAME[:JSON]",
        help="as for eval and rescore: an id with options or module:object",
    )
    canary.add_argument(
        "--judge", metavar="MODEL", help="the model of an LLM-judged scorer that names none (a LiteLLM model)"
    )
    canary.add_argument(
        "--runs",
        metavar="FILE",
        help="the run ids to pin, one a line (default: the runs labelled for the scorer)",
    )
    canary.add_argument(
        "--every", metavar="INTERVAL", help="repeat every INTERVAL (30s, 15m, 1h, 1d) until interrupted"
    )
    canary.add_argument("--webhook", metavar="URL", help="POST a JSON alert to URL when the judge drifts")
    canary.add_argument("--concurrency", type=int, default=8, help="scorer calls at once (default 8)")
    canary.add_argument("--table", default="agentevals_scores", help="the store's scores table")
    canary.set_defaults(handler=functools.partial(canary_command, load_scorer=load_scorer))


def canary_command(args: argparse.Namespace, *, load_scorer: ScorerLoader) -> int:
    from agentevals._store._store import open_store
    from agentevals._trust._canary import run_canary
    from agentevals._trust._opened import check_labels_kept

    try:
        every = parse_interval(args.every) if args.every is not None else None
        webhook = check_webhook(args.webhook) if args.webhook is not None else None
        runs = read_run_ids(Path(args.runs)) if args.runs is not None else None
    except ValueError as err:
        return _error(str(err))
    except OSError as err:
        return _error(f"--runs: {err}")
    if args.concurrency < 1:
        return _error(f"--concurrency {args.concurrency}: expected 1 or more")
    scorer = load_scorer(args.scorer, args.judge)
    try:
        scorer.check()
    except ValueError as err:
        return _error(f"scorer {scorer.id!r}: {err}")
    try:
        check_labels_kept(args.db)
        store = open_store(args.db, table=args.table)
    except ValueError as err:
        return _error(f"--db: {err}")
    with store:
        try:
            while True:
                started = time.monotonic()
                try:
                    found = run_canary(store, scorer, runs=runs, concurrency=args.concurrency)
                except ValueError as err:
                    return _error(str(err))
                print(found.summary(), flush=True)
                if found.drifted and webhook is not None:
                    post_alert(webhook, found.alert(store.display), timeout=TIMEOUT)
                if every is None:
                    return DRIFT if found.drifted else 0
                time.sleep(max(0.0, every - (time.monotonic() - started)))
        except KeyboardInterrupt:
            return INTERRUPTED


def parse_interval(text: str) -> float:
    """Seconds of ``30s``, ``15m``, ``1h`` or ``1d``.

    >>> parse_interval("90s"), parse_interval("1.5h")
    (90.0, 5400.0)
    """
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", text)
    if match is None or float(match[1]) <= 0:
        raise ValueError(f"--every {text!r}: expected a number and a unit, e.g. 30s, 15m, 1h or 1d")
    return float(match[1]) * _UNITS[match[2]]


def read_run_ids(path: Path) -> list[str]:
    """The run ids of ``path``: one a line; blank lines and ``#`` comments are read past."""
    with path.open(encoding="utf-8") as file:
        found = [line.split("#", 1)[0].strip() for line in file]
    ids = [run_id for run_id in found if run_id]
    if not ids:
        raise ValueError(f"--runs {str(path)!r}: no run id in the file (one a line)")
    return ids


def _error(message: str) -> int:
    print(f"agentevals canary: error: {message}", file=sys.stderr)
    return 2
