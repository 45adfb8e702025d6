"""Readable tables (rich) for a stored-results ``Report`` (an ``EvalResult`` prints itself)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentevals._evals._format import number, percent, share, shorten, usd
from agentevals._evals._pass_rates import PassRate
from agentevals._evals._report import Coverage, Group, Report, WorstRun
from agentevals._trust._agreement import Agreement, VersionAgreement
from agentevals._trust._stats import Estimate

if TYPE_CHECKING:
    from rich.console import Console


def render_report(report: Report, console: Console) -> None:
    """Tables per scorer, its pass rates and its agreement with people's labels, per entity and scorer,
    per day and scorer; each scorer's coverage of the stored runs; the worst-scored runs."""
    scope = [f"db {report.db}"]
    if report.since:
        scope.append(f"since {report.since}")
    if report.source:
        scope.append(f"source {report.source}")
    console.print(
        f"agentevals report: {', '.join(scope)}: {report.total} records, {report.failures} failures"
    )
    if report.canary_left_out:
        console.print(
            f"{report.canary_left_out} canary records left out: they judge labelled runs again "
            "(--source canary reports them)"
        )
    if not report.total:
        console.print("no score records match")
        return
    _group_table(console, "per scorer", report.by_scorer, ["scorer_id"], extra=True)
    if report.pass_rates:
        _pass_table(console, report.pass_rates, {found.scorer: found for found in report.agreement})
    for found in report.agreement:
        _agreement_tables(console, found)
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


def _pass_table(console: Console, rates: list[PassRate], agreements: dict[str, Agreement]) -> None:
    """The pass rates; with labels, beside each the newest version's rate corrected for the judge's
    error (of its scored records: see the agreement tables)."""
    from rich.table import Table

    table = Table(title="pass rates (errored records count as not passed)", title_justify="left")
    table.add_column("scorer")
    table.add_column("threshold")
    for name in ("scores", "errored", "pass rate"):
        table.add_column(name, justify="right")
    if agreements:
        table.add_column("corrected by labels (newest version)")
    for r in rates:
        origin = "" if r.origin == "stored" else " (--pass-threshold)"
        cells = [str(r.scores), str(r.errored), share(r.passed, r.scores + r.errored)]
        if agreements:
            found = agreements.get(r.scorer_id)
            newest = found.versions[0] if found is not None and found.versions else None
            cells.append("-" if newest is None else f"{newest.corrected_text} ({_version(newest)})")
        table.add_row(r.scorer_id, f"{r.threshold}{origin}", *cells)
    console.print(table)


def _agreement_tables(console: Console, found: Agreement) -> None:
    """One scorer against people's labels: per version the confusion and its rates, the numeric
    agreement (labels of kind score), the pass rates raw, of the labels and corrected, and the worst
    disagreements."""
    from rich.table import Table

    origin = {"given": "--pass-threshold", "stored": "stored", "default": "default"}[found.threshold_origin]
    title = (
        f"agreement with people: {found.scorer} (pass: score {found.threshold}, {origin}; "
        f"{found.labels} labels, {found.unmatched} without a scored record)"
    )
    table = Table(title=title, title_justify="left")
    table.add_column("version")
    for name in ("labels", "tp", "fn", "fp", "tn", "accuracy", "TPR", "TNR", "kappa"):
        table.add_column(name, justify="right")
    for v in found.versions:
        c = v.confusion
        cells = [str(v.n), str(c.tp), str(c.fn), str(c.fp), str(c.tn)]
        table.add_row(_version(v), *cells, *(_estimate(e) for e in (v.accuracy, v.tpr, v.tnr, v.kappa)))
    console.print(table, markup=False, highlight=False)
    numeric = [(v, v.numeric) for v in found.versions if v.numeric is not None]
    if numeric:
        table = Table(title=f"{found.scorer}: scores against labels of kind score", title_justify="left")
        table.add_column("version")
        for name in ("pairs", "MAE", "Pearson", "Spearman"):
            table.add_column(name, justify="right")
        for v, m in numeric:
            table.add_row(_version(v), str(m.n), *(_estimate(e) for e in (m.mae, m.pearson, m.spearman)))
        console.print(table, markup=False, highlight=False)
    _corrected_table(console, found)
    _disagreement_table(console, found)


def _corrected_table(console: Console, found: Agreement) -> None:
    from rich.table import Table

    table = Table(
        title=f"{found.scorer}: pass rates of scored records, corrected by labels "
        f"({found.min_per_class} of each class needed)",
        title_justify="left",
    )
    table.add_column("version")
    for name in ("scored", "errored", "judge's pass rate", "labels' pass rate"):
        table.add_column(name, justify="right")
    table.add_column("corrected pass rate")
    for v in found.versions:
        raw = f"{v.raw.passed}/{v.raw.scored} {_estimate(v.raw.rate)}"
        cells = [str(v.raw.scored), str(v.raw.errored), raw, _estimate(v.labels_pass_rate)]
        table.add_row(_version(v), *cells, v.corrected_text)
    console.print(table, markup=False, highlight=False)


def _disagreement_table(console: Console, found: Agreement) -> None:
    from rich.table import Table

    rows = [(v, d) for v in found.versions for d in v.disagreements]
    if not rows:
        return
    total = sum(v.confusion.fn + v.confusion.fp for v in found.versions)
    table = Table(
        title=f"{found.scorer}: disagreements, worst first ({len(rows)} of {total})",
        title_justify="left",
    )
    table.add_column("version")
    table.add_column("run", overflow="fold")
    table.add_column("labeller")
    for name in ("score", "label", "gap"):
        table.add_column(name, justify="right")
    for v, d in rows:
        label = ("pass" if d.label >= 0.5 else "fail") if d.kind == "pass_fail" else number(d.label)
        table.add_row(_version(v), d.run_id, d.labeller or "-", number(d.score), label, number(d.gap))
    console.print(table, markup=False, highlight=False)


def _version(v: VersionAgreement) -> str:
    return "-" if v.version is None else v.version


def _estimate(value: Estimate | None) -> str:
    return "-" if value is None else str(value)


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
