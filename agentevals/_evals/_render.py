"""Readable tables (rich) for a stored-results ``Report`` (an ``EvalResult`` prints itself)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentevals._evals._format import number, percent, share, shorten, usd
from agentevals._evals._pass_rates import PassRate
from agentevals._evals._report import Coverage, Group, Report, WorstRun

if TYPE_CHECKING:
    from rich.console import Console


def render_report(report: Report, console: Console) -> None:
    """Tables per scorer, per entity and scorer, per day and scorer; each scorer's coverage of the stored
    runs; the worst-scored runs."""
    scope = [f"db {report.db}"]
    if report.since:
        scope.append(f"since {report.since}")
    if report.source:
        scope.append(f"source {report.source}")
    console.print(
        f"agentevals report: {', '.join(scope)}: {report.total} records, {report.failures} failures"
    )
    if not report.total:
        console.print("no score records match")
        return
    _group_table(console, "per scorer", report.by_scorer, ["scorer_id"], extra=True)
    if report.pass_rates:
        _pass_table(console, report.pass_rates)
    _group_table(console, "per entity", report.by_entity, ["entity", "scorer_id"])
    _group_table(console, "per day (UTC)", report.by_day, ["day", "scorer_id"])
    _coverage_table(console, report.coverage, report.runs)
    if report.worst:
        _worst_table(console, report.worst)


def _coverage_table(console: Console, coverage: list[Coverage], runs: int) -> None:
    from rich.table import Table

    # Runs seen: every stored run (all offered runs with store_runs="all"); sampled: those the scorer has
    # a row for; dropped: runs sampled for it that the engine dropped (from the store's drops table).
    table = Table(title=f"coverage ({runs} runs seen in the store)", title_justify="left")
    table.add_column("scorer")
    for name in ("rows", "scored", "failed", "skipped", "sampled runs", "share", "dropped"):
        table.add_column(name, justify="right")
    table.add_column("skip reasons")
    for c in coverage:
        reasons = ", ".join(f"{reason} ×{n}" for reason, n in c.skip_reasons.items())
        cells = [c.scorer_id, str(c.rows), str(c.scored), str(c.failed), str(c.skipped), str(c.runs)]
        table.add_row(*cells, percent(c.share), str(c.dropped), reasons)
    console.print(table)


def _pass_table(console: Console, rates: list[PassRate]) -> None:
    from rich.table import Table

    table = Table(title="pass rates (errored records count as not passed)", title_justify="left")
    table.add_column("scorer")
    table.add_column("threshold")
    for name in ("scores", "errored", "pass rate"):
        table.add_column(name, justify="right")
    for r in rates:
        origin = "" if r.origin == "stored" else " (--pass-threshold)"
        cells = [str(r.scores), str(r.errored), share(r.passed, r.scores + r.errored)]
        table.add_row(r.scorer_id, f"{r.threshold}{origin}", *cells)
    console.print(table)


def _worst_table(console: Console, worst: list[WorstRun]) -> None:
    from rich.table import Table

    table = Table(title=f"worst runs (lowest {len(worst)} scores)", title_justify="left")
    for name in ("score", "scorer", "entity", "run", "created_at (UTC)", "reason", "input"):
        table.add_column(name, justify="right" if name == "score" else "left", overflow="fold")
    for w in worst:
        table.add_row(
            number(w.score),
            w.scorer_id,
            w.entity or "-",
            w.run_id,
            w.created_at[:19],
            shorten(w.reason or "", 60),
            shorten(w.input or "-", 60),
        )
    console.print(table, markup=False, highlight=False)


def _group_table(
    console: Console, title: str, groups: list[Group], keys: list[str], *, extra: bool = False
) -> None:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for key in keys:
        table.add_column(key.replace("_id", ""))
    for name in ("n", "mean", "stdev", "min", "max", "failures"):
        table.add_column(name, justify="right")
    if extra:
        table.add_column("tokens", justify="right")
        table.add_column("cost", justify="right")
        table.add_column("top error")
    for group in groups:
        cells = [str(group.key.get(k) or "-") for k in keys]
        cells += [
            str(group.count),
            number(group.mean),
            number(group.stdev),
            number(group.min),
            number(group.max),
        ]
        cells.append(f"{group.failures} ({group.failure_rate:.0%})" if group.failures else "0")
        if extra:
            cells += [str(group.tokens), usd(group.cost_usd), group.top_error or ""]
        table.add_row(*cells)
    console.print(table)
