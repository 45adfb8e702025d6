"""``agentevals label --db STORE --scorer KEY``: a terminal session that shows one stored run at a time,
with the judge's score, reason and threshold, and stores a person's label of it with one key.

Keys: ``p`` pass, ``f`` fail, ``s`` a score (typed, then Enter), ``n`` a note for the next label, ``k``
skip, ``q`` quit. Each label is stored when its key is pressed, so quitting (``q``, Ctrl-C) keeps them;
a run this labeller already labelled for ``KEY`` is not shown again, so a session resumes where the
last one stopped. Exit codes: 0 done or quit, 2 a bad option or store, 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from agentevals._cli._label_pick import PICKS


def add_label_command(sub: Any) -> None:
    """Add ``label`` to the subparsers ``sub``."""
    label = sub.add_parser(
        "label", help="label stored runs one at a time in the terminal: pass, fail or a score"
    )
    label.add_argument("--db", required=True, help="a SQLite file or a postgresql:// URL")
    label.add_argument("--scorer", required=True, metavar="KEY", help="the scorer id whose runs to label")
    label.add_argument("--sample", type=int, metavar="N", help="show at most N runs in this session")
    label.add_argument(
        "--pick",
        choices=PICKS,
        default="uncertain",
        help="uncertain: scores nearest the threshold first (default); disagreement: the runs the store's "
        "scorers split on first; random",
    )
    label.add_argument("--seed", type=int, help="the seed of --pick random (a repeatable order)")
    label.add_argument(
        "--labeller",
        metavar="NAME",
        help="who labels (default: the user name); a run is shown once per labeller",
    )
    label.add_argument("--table", default="agentevals_scores", help="the store's scores table")
    label.set_defaults(handler=label_runs)


def label_runs(args: argparse.Namespace) -> int:
    from agentevals._cli._label_pick import candidates, ordered
    from agentevals._cli._label_session import Session
    from agentevals._store import _label_reads
    from agentevals._store._store import open_store
    from agentevals._trust._agreement import DEFAULT_THRESHOLD
    from agentevals._trust._opened import check_labels_kept

    if args.sample is not None and args.sample < 1:
        return _error(f"--sample {args.sample}: expected a number of runs, 1 or more")
    labeller = args.labeller if args.labeller is not None else _user()
    try:
        check_labels_kept(args.db)
        store = open_store(args.db, table=args.table)
    except ValueError as err:
        return _error(f"--db: {err}")
    with store:
        q = store.reading
        thresholds = _label_reads.stored_thresholds(q)
        rows = _label_reads.scores_to_pick_from(q, args.scorer, every_scorer=args.pick == "disagreement")
        if not rows:
            return _error(f"--scorer {args.scorer!r}: {store.display} holds no score of this scorer to label")
        done = _label_reads.labelled_by(q, args.scorer, labeller)
        found = candidates(rows, args.scorer, thresholds, DEFAULT_THRESHOLD, exclude=done)
        queue = ordered(found, args.pick, seed=args.seed)[: args.sample]
        if not queue:
            who = labeller or "the labeller without a name"
            print(f"nothing left to label: {who} labelled every run {args.scorer} scored")
            return 0
        session = Session(store, args.scorer, labeller, thresholds.get(args.scorer, DEFAULT_THRESHOLD))
        return session.run(queue)


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no user name in the environment or the password database
        return ""


def _error(message: str) -> int:
    print(f"agentevals label: error: {message}", file=sys.stderr)
    return 2
