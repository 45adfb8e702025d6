"""The ``agentevals`` command: ``demo``, ``eval``, ``report``, ``replay``, ``rescore`` and the commands of
``agentevals._cli`` (``labels``, ``label``, ``canary``).

Exit codes: 0 success, 1 a threshold or gate failed or an item errored (``eval``), 2 usage errors,
3 the judge drifted (``canary``), 130 interrupted (Ctrl-C; ``eval`` prints the summary of the items
done first).
Example: ``agentevals eval data.jsonl --target app:agent --scorer exact_match --threshold exact_match=0.8``
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import importlib.util
import inspect
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from agentevals._model._result import SOURCES
from agentevals._scoring._scorer import Scorer

INTERRUPTED = 130  # the shell's code for a process ended by Ctrl-C (128 + SIGINT)
BROKEN_PIPE = 141  # the shell's code for a process whose reader closed the pipe (128 + SIGPIPE)


class UsageError(Exception):
    """A bad command line: printed without a traceback, exit code 2."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["demo"]:  # everything after `demo` belongs to the demo, options included
        return _demo(argparse.Namespace(command="demo", rest=args_list[1:]))
    parser = _parser()
    try:
        args, unknown = parser.parse_known_args(args_list)
        if unknown:
            _unrecognized(parser, args.command, unknown)
    except SystemExit as exit:  # argparse: --help or --version (0) or a usage error (2)
        return exit.code if isinstance(exit.code, int) else 2
    if args.command is None:
        parser.print_help()
        return 2
    try:
        code: int = args.handler(args)
    except UsageError as err:
        print(f"agentevals {args.command}: error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader left (`agentevals export | head`): stop quietly
        _discard_stdout()
        return BROKEN_PIPE
    return code


def _unrecognized(parser: argparse.ArgumentParser, command: str | None, unknown: list[str]) -> NoReturn:
    """Exit 2 naming the arguments no option of ``command`` takes, with the options close to each."""
    target = _subparsers(parser).get(command or "", parser)
    options = [o for action in target._actions for o in action.option_strings]
    hints = [
        f"{arg} (did you mean {' or '.join(close)}?)"
        if arg.startswith("-") and (close := difflib.get_close_matches(arg.partition("=")[0], options, n=2))
        else arg
        for arg in unknown
    ]
    target.error(f"unrecognized arguments: {' '.join(hints)}")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so that Python's flush at exit does not fail on the closed pipe."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentevals", description="Evaluate LLM agents and chains.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(
        dest="command", metavar="{demo,eval,report,replay,rescore,export,labels,label,canary,worker,view}"
    )

    demo = sub.add_parser("demo", help="run the LangChain demo (needs agentevals-langchain)", add_help=False)
    demo.add_argument("rest", nargs=argparse.REMAINDER)
    demo.set_defaults(handler=_demo)

    ev = sub.add_parser("eval", help="run a target over a dataset and score it")
    ev.add_argument("dataset", help="a .jsonl, .json, .csv or .yaml file of items with an 'input'")
    ev.add_argument("--target", required=True, help="module:object (or path/to/file.py:object)")
    ev.add_argument(
        "--scorer",
        action="append",
        required=True,
        metavar="NAME[:JSON]",
        help='a prebuilt scorer id with its options (exact_match, regex:{"pattern":"^a"}) or module:object',
    )
    _add_judge_argument(ev)
    ev.add_argument("--concurrency", type=int, default=4)
    ev.add_argument("--repeats", type=int, default=1)
    ev.add_argument(
        "--threshold", action="append", default=[], metavar="SCORER=MIN", help="e.g. exact_match=0.7"
    )
    ev.add_argument(
        "--db", help="also store every record here: a SQLite file, a postgresql:// URL or a .jsonl file"
    )
    ev.add_argument("--table", default="agentevals_scores", help="the store's scores table")
    ev.add_argument("--json", action="store_true", help="print the summary as JSON instead of a table")
    ev.add_argument("--no-progress", action="store_true")
    ev.add_argument("--html", metavar="FILE", help="also write an HTML report of this run to FILE")
    ev.set_defaults(handler=_eval)

    rep = sub.add_parser("report", help="summarise stored score records")
    rep.add_argument("--db", default="agentevals.db", help="a SQLite file or a postgresql:// URL")
    rep.add_argument("--since", help="7d, 24h, 30m, 2w, or an ISO date/datetime (UTC)")
    rep.add_argument(
        "--source",
        choices=SOURCES,
        help="only the records of this source (default: every source but canary, whose records judge "
        "labelled runs again)",
    )
    rep.add_argument("--table", default="agentevals_scores")
    rep.add_argument("--worst", type=int, default=10, metavar="N", help="list the N lowest scores (0: none)")
    rep.add_argument(
        "--pass-threshold",
        action="append",
        default=[],
        metavar="[SCORER=]MIN",
        help="pass rates against MIN instead of the stored thresholds; SCORER=MIN for one scorer; repeatable",
    )
    rep.add_argument(
        "--min-labels",
        type=int,
        default=30,
        metavar="N",
        help="correct a pass rate for the judge's error once people labelled N passing and N failing runs",
    )
    rep.add_argument("--json", action="store_true")
    rep.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report to FILE")
    rep.set_defaults(handler=_report)

    rp = sub.add_parser("replay", help="re-send a dead-letter file to a store")
    rp.add_argument("deadletter")
    rp.add_argument(
        "--db", default="agentevals.db", help="a SQLite file, a postgresql:// URL or a .jsonl file"
    )
    rp.add_argument("--table", default="agentevals_scores")
    rp.add_argument(
        "--broker",
        metavar="URL",
        help="also publish the runs a broker refused (its lines with run_entry) through this broker",
    )
    rp.add_argument(
        "--queue", help="with --broker: publish to this queue, not the one each run was refused on"
    )
    rp.set_defaults(handler=_replay)

    rs = sub.add_parser("rescore", help="score stored runs with new scorers, into the same store")
    rs.add_argument("--db", required=True, help="a SQLite file or a postgresql:// URL")
    rs.add_argument(
        "--scorer", action="append", required=True, metavar="NAME[:JSON]", help="as for eval; repeatable"
    )
    _add_judge_argument(rs)
    rs.add_argument("--since", help="7d, 24h, 30m, 2w, or an ISO date/datetime (UTC)")
    rs.add_argument("--entity", help="only the runs of this agent or chain")
    rs.add_argument("--limit", type=int, help="only the newest N runs")
    rs.add_argument("--concurrency", type=int, default=8)
    rs.add_argument("--force", action="store_true", help="score again and replace what this version stored")
    rs.add_argument("--table", default="agentevals_scores", help="the store's scores table")
    rs.add_argument(
        "--sampling", metavar="FILE", help="a sampling policy (JSON or YAML): score the runs it samples"
    )
    rs.add_argument("--no-progress", action="store_true")
    rs.set_defaults(handler=_rescore)

    ex = sub.add_parser("export", help="write stored score records as CSV or JSON Lines")
    ex.add_argument("--db", required=True, help="a SQLite file or a postgresql:// URL")
    ex.add_argument("--format", choices=["csv", "jsonl"], default="csv")
    ex.add_argument("--since", help="7d, 24h, 30m, 2w, or an ISO date/datetime (UTC)")
    ex.add_argument("--scorer", metavar="ID", help="only the records of this scorer id")
    ex.add_argument("--entity", help="only the records of this agent or chain")
    ex.add_argument("--table", default="agentevals_scores")
    ex.add_argument("--output", metavar="FILE", help="write to FILE (default: stdout)")
    ex.add_argument(
        "--no-csv-escape",
        action="store_true",
        help="write CSV text cells as stored, even those a spreadsheet runs as formulas (=, +, -, @)",
    )
    ex.set_defaults(handler=_export)

    from agentevals._cli._canary import add_canary_command
    from agentevals._cli._label import add_label_command
    from agentevals._cli._labels import add_labels_command

    add_labels_command(sub)
    add_label_command(sub)
    add_canary_command(sub, load_scorer)

    from agentevals._worker._cli import add_worker_arguments

    wk = sub.add_parser("worker", help="score the runs agents publish to RabbitMQ or Redis (Dramatiq)")
    add_worker_arguments(wk)
    wk.set_defaults(handler=_worker)

    from agentevals._view._cli import add_view_arguments

    vw = sub.add_parser("view", help="browse a store's scores in a local web app (read-only unless --labels)")
    add_view_arguments(vw)
    vw.set_defaults(handler=_view)
    return parser


def _add_judge_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--judge",
        metavar="MODEL",
        help="the model of the LLM-judged scorers that name none (a LiteLLM model, e.g. openai/gpt-4o-mini)",
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentevals-core")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "(not installed)"


# -- demo -------------------------------------------------------------------------------------------


COMMANDS = "agentevals.commands"
"""The entry-point group where integrations add commands: ``name = "package.module:main"``, where
``main(argv: list[str]) -> int``. ``agentevals-langchain`` adds ``demo``."""


def _demo(args: argparse.Namespace) -> int:
    from importlib.metadata import entry_points

    hint = "agentevals demo needs the LangChain integration: pip install 'agentevals-core[langchain]'"
    points = entry_points(group=COMMANDS, name="demo")
    if not points:
        print(hint, file=sys.stderr)
        return 2
    try:
        demo_main = next(iter(points)).load()
    except ImportError as err:  # installed, but broken or missing one of its dependencies
        print(f"{hint} ({err})", file=sys.stderr)
        return 2
    return int(demo_main(list(args.rest)))


# -- eval -------------------------------------------------------------------------------------------


def _eval(args: argparse.Namespace) -> int:
    from agentevals.evals import run_evals

    target = load_object(args.target, "--target")
    scorers = _scorers(args)
    thresholds = _thresholds(args.threshold)
    scratch = None
    if args.html and not args.db:  # the HTML report reads the run's records back from a store
        import tempfile

        scratch = tempfile.TemporaryDirectory(prefix="agentevals-")
        args.db = str(Path(scratch.name) / "eval.db")
    sinks: list[Any] = []
    if args.db:
        from agentevals.sinks._open import sink_for

        try:
            sinks.append(_checked(sink_for(args.db, table=args.table)))
        except ValueError as err:  # a bad --table
            raise UsageError(str(err)) from err
    try:
        result = run_evals(
            args.dataset,
            scorers,
            target,
            concurrency=args.concurrency,
            repeats=args.repeats,
            thresholds=thresholds,
            sinks=sinks,
            progress=not args.no_progress,
            name=_target_entity(target, args.target),
        )
    except (ValueError, TypeError) as err:
        raise UsageError(str(err)) from err
    finally:
        for sink in sinks:
            _close(sink)
    if args.json:
        print(json.dumps(_result_json(result), indent=2))
    else:
        from agentevals._evals._summary import render_eval

        render_eval(result, _console())
    if args.html:
        _write_html(args, eval_id=result.summary.eval_id)
    if scratch is not None:
        scratch.cleanup()
    if result.interrupted:
        done, total = result.summary.total_runs, result.summary.total_items * args.repeats
        print(f"agentevals eval: interrupted after {done} of {total} runs", file=sys.stderr)
        return INTERRUPTED
    return 0 if result.passed else 1


def _scorers(args: argparse.Namespace) -> list[Scorer]:
    """The ``--scorer`` scorers, checked: a judge without its key fails here, not once per item."""
    scorers = [load_scorer(spec, judge=args.judge) for spec in args.scorer]
    for scorer in scorers:
        try:
            scorer.check()
        except ValueError as err:
            raise UsageError(f"scorer {scorer.id!r}: {err}") from err
    return scorers


def _target_entity(target: Any, spec: str) -> str:
    """The name the records give the target: its own when it has one, else the attribute ``--target``
    names (a graph compiled without ``name=`` is called "LangGraph", a chain by its class)."""
    own = getattr(target, "name", None)
    if isinstance(own, str) and own and own != "LangGraph":
        return own
    return spec.rpartition(":")[2].rpartition(".")[2]


def _checked(sink: Any) -> Any:
    """``sink`` once its ``check()`` passed: a store that cannot work stops the command up front."""
    try:
        sink.check()
    except ValueError as err:
        raise UsageError(f"--db: {err}") from err
    return sink


def _close(sink: Any) -> None:
    from agentevals._support._sync import run_sync

    run_sync(sink.close())


def _thresholds(values: list[str]) -> dict[str, float]:
    out = {}
    for value in values:
        name, sep, number = value.rpartition("=")
        try:
            out[name] = float(number)
        except ValueError:
            name = ""
        if not sep or not name:
            raise UsageError(f"--threshold {value!r}: expected SCORER=MIN, e.g. exact_match=0.8")
    return out


def _result_json(result: Any) -> dict[str, Any]:
    summary = result.summary
    return {
        "verdict": result.verdict,
        "interrupted": result.interrupted,
        "eval_id": summary.eval_id,
        "scores": result.scores,
        "total_items": summary.total_items,
        "total_runs": summary.total_runs,
        "passed_runs": summary.passed_runs,
        "errored_runs": summary.errored_runs,
        "below_threshold_runs": summary.below_threshold_runs,
        "pass_rate": summary.pass_rate,
        "scorers": {
            key: {
                "mean": s.mean,
                "stdev": s.stdev,
                "min": s.min,
                "max": s.max,
                "count": s.count,
                "errors": s.errors,
                "pass_rate": s.pass_rate,
                "passes": s.passes,
                "passed": s.passed,
            }
            for key, s in summary.scorers.items()
        },
    }


def load_object(spec: str, option: str) -> Any:
    """Import ``module:attr.path`` (or ``file.py:attr``); the current directory is importable."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"{option} {spec!r}: expected module:object, e.g. myapp.agents:support_agent")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        if module_name.endswith(".py"):
            module = _module_from_file(Path(module_name))
        else:
            module = importlib.import_module(module_name)
    except ImportError as err:
        raise UsageError(f"{option} {spec!r}: cannot import {module_name!r} ({err})") from err
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{option} {spec!r}: {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def _module_from_file(path: Path) -> Any:
    if not path.is_file():
        raise ImportError(f"no file {str(path)!r}")
    module_spec = importlib.util.spec_from_file_location(path.stem, path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"cannot load {str(path)!r}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[path.stem] = module
    module_spec.loader.exec_module(module)
    return module


def load_scorer(spec: str, judge: str | None = None) -> Scorer:
    """``NAME``, ``NAME:{json options}``, ``module:object`` or ``module:object:{json options}``.

    A factory is called with the options as keyword arguments; a scorer object takes no options. A
    factory with a ``model`` parameter (an LLM judge) gets ``judge`` (``--judge``) unless the options
    name a model.
    """
    head, sep, options_text = spec.partition(":{")
    options: dict[str, Any] = {}
    if sep:
        try:
            options = json.loads("{" + options_text)
        except json.JSONDecodeError as err:
            raise UsageError(f"--scorer {spec!r}: the options are not valid JSON ({err.msg})") from err
        if not isinstance(options, dict):
            raise UsageError(f"--scorer {spec!r}: the options must be a JSON object")
    obj = load_object(head, "--scorer") if ":" in head else _prebuilt(head)
    if isinstance(obj, Scorer):
        if options:
            raise UsageError(f"--scorer {spec!r}: {head!r} is a ready scorer and takes no options")
        return obj
    if not callable(obj):
        raise UsageError(f"--scorer {spec!r}: {head!r} is neither a Scorer nor a factory returning one")
    parameters = _parameters(obj)
    if options and not parameters:
        raise UsageError(f"--scorer {spec!r}: {head!r} takes no options")
    if "model" in parameters and "model" not in options:
        if judge is not None:
            options["model"] = judge
        elif parameters["model"].default is inspect.Parameter.empty:
            raise UsageError(
                f"--scorer {spec!r}: {head!r} is an LLM judge and needs a model: add --judge MODEL "
                f"(e.g. --judge openai/gpt-4o-mini) or give it in the options: "
                f'{head}:{{"model": "openai/gpt-4o-mini"}}'
            )
    try:
        scorer = obj(**options)
    except TypeError as err:
        raise UsageError(f"--scorer {spec!r}: {err}") from err
    if not isinstance(scorer, Scorer):
        raise UsageError(f"--scorer {spec!r}: {head!r} returned {type(scorer).__name__}, not a Scorer")
    return scorer


def _parameters(factory: Any) -> Mapping[str, inspect.Parameter]:
    try:
        return inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a callable without a signature (a builtin): no options known
        return {}


def _prebuilt(name: str) -> Any:
    """The factory of the prebuilt scorers with id ``name`` (see ``agentevals.scorers._catalogue``)."""
    from agentevals.scorers._catalogue import SCORERS, scorer_id

    id = name.replace("-", "_")
    if id in SCORERS:
        return SCORERS[id]
    factory_id = scorer_id(id)  # a factory's name points at its id
    close = [factory_id] if factory_id in SCORERS else difflib.get_close_matches(id, list(SCORERS), n=3)
    hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
    raise UsageError(
        f"unknown scorer {name!r}; {hint}prebuilt scorers: {', '.join(SCORERS)} (or use module:object)"
    )


# -- report / replay --------------------------------------------------------------------------------


def _report(args: argparse.Namespace) -> int:
    from agentevals._evals._pass_rates import PassThresholds
    from agentevals._evals._report import build_report, parse_since

    try:
        since = parse_since(args.since) if args.since else None
        report = build_report(
            args.db,
            since=since,
            source=args.source,
            table=args.table,
            worst=args.worst,
            thresholds=PassThresholds.parse(args.pass_threshold),
            min_labels=args.min_labels,
        )
    except ValueError as err:
        raise UsageError(str(err)) from err
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        from agentevals._evals._render import render_report

        render_report(report, _console())
    if args.html:
        _write_html(args)
    return 0


def _write_html(args: argparse.Namespace, eval_id: str | None = None) -> None:
    from agentevals._view._cli import report_html

    try:
        print(f"HTML report written to {report_html(args, eval_id=eval_id)}", file=sys.stderr)
    except (ValueError, ImportError, OSError) as err:
        raise UsageError(f"--html: {err}") from err


def _view(args: argparse.Namespace) -> int:
    from agentevals._view._cli import view

    try:
        view(args)
    except (ValueError, ImportError) as err:
        raise UsageError(str(err)) from err
    return 0


def _replay(args: argparse.Namespace) -> int:
    """Exit 1 when a line stays in the file: a record the store refused, or a line it cannot replay."""
    from agentevals._store._store import display_address
    from agentevals._support._sync import run_sync
    from agentevals.sinks._open import sink_for
    from agentevals.sinks._replay import replay_file

    if not Path(args.deadletter).is_file():
        raise UsageError(f"no dead-letter file at {args.deadletter!r}")
    if args.queue is not None and args.broker is None:
        raise UsageError("--queue goes with --broker URL")
    status = _republish(args) if args.broker is not None else 0
    if not Path(args.deadletter).is_file():  # it held only runs, now published
        return status
    try:
        sink = _checked(sink_for(args.db, table=args.table))
    except ValueError as err:  # a bad --table
        raise UsageError(str(err)) from err
    try:
        outcome = run_sync(replay_file(args.deadletter, sink))
    finally:
        _close(sink)
    print(f"replayed {outcome.delivered} records into {display_address(args.db)}")
    if outcome.undelivered:
        print(f"{outcome.undelivered} record(s) kept in {args.deadletter}: the store failed (see above)",
              file=sys.stderr)  # fmt: skip
        status = 1
    for number, why in outcome.unread[:20]:
        print(f"{args.deadletter}:{number}: kept, not replayed: {why}", file=sys.stderr)
    if len(outcome.unread) > 20:
        print(f"... and {len(outcome.unread) - 20} more line(s) kept", file=sys.stderr)
    return 1 if outcome.unread else status


def _republish(args: argparse.Namespace) -> int:
    from agentevals._engine._forward._republish import republish
    from agentevals._store._store import display_address

    try:
        done = republish(args.deadletter, args.broker, queue=args.queue)
    except ValueError as err:
        raise UsageError(f"--broker: {err}") from err
    print(f"published {done.published} runs through {display_address(args.broker)}")
    if done.error is None:
        return 0
    print(f"{done.kept} run(s) kept in {args.deadletter}: the broker failed ({done.error})", file=sys.stderr)
    return 1


def _export(args: argparse.Namespace) -> int:
    from agentevals._evals._export import export
    from agentevals._evals._report import parse_since
    from agentevals._store._store import open_store

    try:
        since = parse_since(args.since) if args.since else None
        store = open_store(args.db, table=args.table)
    except ValueError as err:
        raise UsageError(str(err)) from err
    options: dict[str, Any] = {
        "format": args.format,
        "since": since,
        "scorer": args.scorer,
        "entity": args.entity,
        "csv_escape": not args.no_csv_escape,
    }
    try:
        if args.output is None:
            count = export(store, sys.stdout, **options)
        else:
            try:
                with open(args.output, "w", encoding="utf-8", newline="") as out:
                    count = export(store, out, **options)
            except OSError as err:
                raise UsageError(f"--output: {err}") from err
            print(f"exported {count} records to {args.output}", file=sys.stderr)
    finally:
        store.close()
    return 0


def _rescore(args: argparse.Namespace) -> int:
    from agentevals._engine._sampling import Sampling
    from agentevals._evals._report import parse_since
    from agentevals._store._store import open_store
    from agentevals.evals import rescore

    if args.limit is not None and args.limit < 0:
        raise UsageError(f"--limit {args.limit}: expected a number of runs, 0 or more")
    if args.concurrency < 1:
        raise UsageError(f"--concurrency {args.concurrency}: expected 1 or more")
    scorers = _scorers(args)
    try:
        since = parse_since(args.since) if args.since else None
    except ValueError as err:
        raise UsageError(str(err)) from err
    try:
        sampling = Sampling.from_file(args.sampling) if args.sampling else None
    except (OSError, ValueError) as err:
        raise UsageError(f"--sampling: {err}") from err
    try:
        store = open_store(args.db, table=args.table)
    except ValueError as err:  # no store there, or one newer than this library
        raise UsageError(f"--db: {err}") from err
    try:
        summary = rescore(
            store,
            scorers,
            since=since,
            entity=args.entity,
            limit=args.limit,
            concurrency=args.concurrency,
            force=args.force,
            progress=not args.no_progress,
            sampling=sampling,
        )
    except (ValueError, TypeError) as err:
        raise UsageError(str(err)) from err
    finally:
        store.close()
    print(
        f"rescored {summary.runs} runs from {args.db}: {summary.scored} scored, {summary.failed} failed, "
        f"{summary.skipped} skipped, {summary.already_scored} already scored"
        + (f", {summary.sampled_out} sampled out" if sampling is not None else "")
        + (f", {summary.sink_errors} batches not stored" if summary.sink_errors else "")
    )
    if summary.interrupted:
        print(f"agentevals rescore: interrupted after {summary.total} records", file=sys.stderr)
        return INTERRUPTED
    return 0


def _worker(args: argparse.Namespace) -> int:
    from agentevals._worker._cli import run_worker

    try:
        return run_worker(args)
    except ValueError as err:
        raise UsageError(str(err)) from err


def _console() -> Any:
    from rich.console import Console

    # Wide enough for the tables when stdout is a file or a pipe (CI logs).
    return Console(width=None if sys.stdout.isatty() else 160)


def run() -> NoReturn:
    """The console script: :func:`main`, then exit with its code.

    After Ctrl-C (130) the process exits at once instead of waiting for a target still running in a
    thread of an interrupted ``eval`` (Python would join that thread first).
    """
    code = main()
    if code == INTERRUPTED:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
