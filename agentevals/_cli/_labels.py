"""``agentevals labels import FILE --db STORE`` and ``agentevals labels export --db STORE``: people's
labels of stored runs, in and out of a store as CSV or JSON Lines (see ``agentevals._trust._label_files``).

Both print an error and return 2 for a bad file, option or store; an import stores every line of the
file or, with a bad line, none. A CSV export prefixes with ``'`` the text cells a spreadsheet would run
as formulas, as ``agentevals export`` does (``--no-csv-escape`` writes them as stored).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from agentevals._store._store import display_address

if TYPE_CHECKING:
    from agentevals._trust._labels import Label


def add_labels_command(sub: Any) -> None:
    """Add ``labels`` with its ``import`` and ``export`` commands to the subparsers ``sub``."""
    labels = sub.add_parser("labels", help="import and export people's labels of stored runs")
    actions = labels.add_subparsers(dest="labels_command", metavar="{import,export}", required=True)
    imports = actions.add_parser(
        "import",
        help="add the labels of a CSV or JSONL file (run_id, name, value, labeller, note) to a store",
    )
    imports.add_argument("file", help="a .csv (with a header) or .jsonl file, one label per line")
    imports.add_argument("--db", required=True, help="a SQLite file or a postgresql:// URL")
    imports.add_argument("--labeller", metavar="NAME", help="who labelled the lines that name no labeller")
    imports.add_argument("--table", default="agentevals_scores", help="the store's scores table")
    imports.set_defaults(handler=import_labels)
    exports = actions.add_parser("export", help="write a store's labels as CSV or JSON Lines")
    exports.add_argument("--db", required=True, help="a SQLite file or a postgresql:// URL")
    exports.add_argument("--out", metavar="FILE", help="write to FILE (default: stdout)")
    exports.add_argument(
        "--format", choices=["csv", "jsonl"], help="default: from --out's extension, else csv"
    )
    exports.add_argument(
        "--no-csv-escape",
        action="store_true",
        help="write CSV text cells as stored, even those a spreadsheet runs as formulas (=, +, -, @)",
    )
    exports.add_argument("--table", default="agentevals_scores", help="the store's scores table")
    exports.set_defaults(handler=export_labels)


def import_labels(args: argparse.Namespace) -> int:
    from agentevals._trust._label_files import LabelFileError, read_labels
    from agentevals._trust._labels import Labels

    try:
        labels = read_labels(args.file, labeller=args.labeller)
    except LabelFileError as err:
        for problem in err.problems:
            print(problem, file=sys.stderr)
        return _error("import", f"{len(err.problems)} bad line(s) in {args.file}: nothing imported")
    except (OSError, ValueError) as err:
        return _error("import", str(err))
    try:
        with Labels(args.db, table=args.table) as store:
            store.add_all(labels)
    except ValueError as err:
        return _error("import", f"--db: {err}")
    print(f"imported {len(labels)} labels into {display_address(args.db)}")
    return 0


def export_labels(args: argparse.Namespace) -> int:
    from agentevals._trust._label_files import file_format, write_labels
    from agentevals._trust._labels import Labels

    try:
        kind = args.format or (file_format(args.out) if args.out else "csv")
    except ValueError as err:
        return _error("export", f"--out: {err}; or pass --format")
    try:
        with Labels(args.db, table=args.table) as store:
            labels = store.list()
    except ValueError as err:
        return _error("export", f"--db: {err}")
    if kind == "csv" and not args.no_csv_escape:
        labels = list(escaped(labels))
    if args.out is None:
        write_labels(labels, sys.stdout, kind)
        return 0
    try:
        with open(args.out, "w", encoding="utf-8", newline="") as out:
            count = write_labels(labels, out, kind)
    except OSError as err:
        return _error("export", f"--out: {err}")
    print(f"exported {count} labels to {args.out}", file=sys.stderr)
    return 0


def escaped(labels: Iterable[Label]) -> Iterator[Label]:
    """``labels`` with each text a spreadsheet would run as a formula prefixed with ``'``."""
    from agentevals._evals._export import neutralise

    for label in labels:
        yield dataclasses.replace(
            label,
            run_id=neutralise(label.run_id),
            name=neutralise(label.name),
            labeller=neutralise(label.labeller),
            note=neutralise(label.note),
        )


def _error(action: str, message: str) -> int:
    print(f"agentevals labels {action}: error: {message}", file=sys.stderr)
    return 2
