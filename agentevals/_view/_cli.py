"""The ``agentevals view`` command line and ``report --html`` (imported by ``agentevals.cli`` only
when one of them runs, so the web stack loads lazily)."""

from __future__ import annotations

import argparse
import getpass

from agentevals._trust._stats import MIN_LABELS_PER_CLASS
from agentevals._view._app import HOST, PORT

_EXTRA = "agentevals view needs the view extra: pip install 'agentevals-core[view]'"


def add_view_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default="agentevals.db", help="a SQLite file or a postgresql:// URL")
    parser.add_argument("--host", default=HOST, help=f"address to listen on ({HOST}: this machine only)")
    parser.add_argument("--port", type=int, default=PORT)
    parser.add_argument("--table", default="agentevals_scores")
    add_threshold_argument(parser)
    parser.add_argument(
        "--labels",
        action="store_true",
        help="labels mode: each run page gets pass / fail / score buttons that store people's labels",
    )
    parser.add_argument(
        "--labeller", metavar="NAME", help="who labels in labels mode (default: the user name)"
    )
    parser.add_argument(
        "--min-labels",
        type=int,
        default=MIN_LABELS_PER_CLASS,
        metavar="N",
        help="correct a pass rate for the judge's error once people labelled N passing and N failing runs "
        f"(default {MIN_LABELS_PER_CLASS})",
    )


def add_threshold_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pass-threshold",
        action="append",
        default=[],
        metavar="[SCORER=]MIN",
        help="score a record must reach to pass (default: the threshold the store keeps for the scorer, "
        "else 0.5); SCORER=MIN for one scorer; overrides the stored one; repeatable",
    )


def settings(values: list[str]) -> object:
    """The pass thresholds of ``--pass-threshold`` values; raises ``ValueError`` saying what is wrong."""
    from agentevals._evals._pass_rates import PassThresholds
    from agentevals._view._pages import DEFAULT_THRESHOLD, Settings

    given = PassThresholds.parse(values)  # each a minimum: MIN or SCORER=MIN
    per_scorer = {name: t.min for name, t in given.per_scorer.items() if t.min is not None}
    if given.default is None or given.default.min is None:
        return Settings(per_scorer, DEFAULT_THRESHOLD, False)
    return Settings(per_scorer, given.default.min, True)


def view(args: argparse.Namespace) -> None:
    """Serve ``agentevals view``; raises ``ValueError`` for a bad store or option, ``ImportError``
    with the install hint when the view extra is missing."""
    _require_extra()
    from agentevals._view._app import serve

    if not 0 < args.port < 65536:
        raise ValueError(f"--port {args.port}: expected 1 to 65535")
    if args.labeller is not None and not args.labels:
        raise ValueError("--labeller names who labels in labels mode: add --labels")
    if args.min_labels < 1:
        raise ValueError(f"--min-labels {args.min_labels}: expected a number of labels, 1 or more")
    serve(
        args.db,
        host=args.host,
        port=args.port,
        table=args.table,
        settings=settings(args.pass_threshold),  # type: ignore[arg-type]
        labeller=(args.labeller if args.labeller is not None else _user()) if args.labels else None,
        min_labels=args.min_labels,
    )


def report_html(args: argparse.Namespace, *, eval_id: str | None = None) -> str:
    """Write ``args.html`` (the report of ``args.db`` under its --since/--source) and return its path."""
    _require_extra()
    from agentevals._evals._report import parse_since
    from agentevals._view._queries import Filters
    from agentevals._view._report_html import write_report

    since = getattr(args, "since", None)
    filters = Filters(
        since=parse_since(since) if since else None, source=getattr(args, "source", None), eval_id=eval_id
    )
    path = write_report(
        args.db,
        args.html,
        filters=filters,
        table=getattr(args, "table", "agentevals_scores"),
        # report: --pass-threshold; eval: its --threshold SCORER=MIN
        settings=settings(getattr(args, "pass_threshold", None) or getattr(args, "threshold", [])),  # type: ignore[arg-type]
        min_labels=getattr(args, "min_labels", MIN_LABELS_PER_CLASS),
    )
    return str(path)


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no user name in the environment or the password database
        return ""


def _require_extra() -> None:
    try:
        import jinja2  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as err:
        raise ImportError(f"{_EXTRA} ({err})") from err
