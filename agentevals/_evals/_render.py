"""Readable tables (rich) for an ``EvalResult`` and a stored-results ``Report``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentevals._evals._report import Coverage, Group, Report, WorstRun
from agentevals._evals._summary import EvalResult, ScorerStats

if TYPE_CHECKING:
    from rich.console import Console, RenderableType


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def render_eval(result: EvalResult, console: Console, *, max_failures: int = 10) -> None:
    """Print :func:`eval_renderables` to ``console``."""
    for renderable in eval_renderables(result, max_failures=max_failures):
        console.print(renderable)


def eval_renderables(result: EvalResult, *, max_failures: int = 10) -> list[RenderableType]:
    """Per scorer: mean, stdev, min, max, pass rate, threshold, errors, skips; then failing items and the
    verdict (what ``agentevals eval``, ``EvalResult.print()`` and ``rich.print(result)`` show)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="agentevals: scores", title_justify="left")
    for name in ("scorer", "mean", "stdev", "min", "max", "pass rate", "threshold", "errors", "skipped"):
        table.add_column(name, justify="left" if name in ("scorer", "threshold") else "right")
    for stats in result.summary.scorers.values():
        table.add_row(
            _label(stats),
            _num(stats.mean),
            _num(stats.stdev),
            _num(stats.min),
            _num(stats.max),
            _pct(stats.pass_rate),
            _threshold(stats),
            str(stats.errors),
            str(stats.skipped),
        )
    out: list[RenderableType] = [table]
    failing = [i for i in result.items if not i.passed]
    for item in failing[:max_failures]:
        detail = item.error or "; ".join(
            f"{key}={_num(record.score)}" + (f" ({record.reason})" if record.reason else "")
            if record.ok
            else f"{key}: {record.error_type}: {record.error_message}"  # type: ignore[union-attr]
            for key, record in item.results.items()
        )
        line = Text.from_markup(
            "[red]✗[/red] item " + str(item.index) + (f" (repeat {item.repeat})" if item.repeat else "") + " "
        )
        line.append(f"input={_short(item.input)}: {detail}")  # user text: never markup
        out.append(line)
    if len(failing) > max_failures:
        out.append(f"... and {len(failing) - max_failures} more failing items")
    for warning in result.summary.warnings:
        out.append(Text.from_markup("[yellow]warning:[/yellow] ").append(warning))
    summary = result.summary
    colour = {"passed": "green", "below_threshold": "yellow", "errored": "red"}[result.verdict]
    out.append(
        f"{summary.total_items} items, {summary.total_runs} runs, {summary.failed_items} failed items, "
        f"{summary.duration_ms / 1000:.2f} s: [bold {colour}]{result.verdict}[/bold {colour}]"
    )
    return out


def _label(stats: ScorerStats) -> str:
    return f"{stats.key} (gate)" if stats.gate else stats.key


def _threshold(stats: ScorerStats) -> str:
    if stats.threshold is None:
        return ""
    mark = "[green]✓[/green]" if stats.passed else "[red]✗[/red]"
    return f"{stats.threshold} {mark}"


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
    _group_table(console, "per entity", report.by_entity, ["entity", "scorer_id"])
    _group_table(console, "per day (UTC)", report.by_day, ["day", "scorer_id"])
    _coverage_table(console, report.coverage, report.runs)
    if report.worst:
        _worst_table(console, report.worst)


def _coverage_table(console: Console, coverage: list[Coverage], runs: int) -> None:
    from rich.table import Table

    table = Table(title=f"coverage ({runs} stored runs)", title_justify="left")
    table.add_column("scorer")
    for name in ("rows", "scored", "failed", "skipped", "runs", "share"):
        table.add_column(name, justify="right")
    table.add_column("skip reasons")
    for c in coverage:
        reasons = ", ".join(f"{reason} ×{n}" for reason, n in c.skip_reasons.items())
        cells = [c.scorer_id, str(c.rows), str(c.scored), str(c.failed), str(c.skipped), str(c.runs)]
        table.add_row(*cells, _pct(c.share), reasons)
    console.print(table)


def _worst_table(console: Console, worst: list[WorstRun]) -> None:
    from rich.table import Table

    table = Table(title=f"worst runs (lowest {len(worst)} scores)", title_justify="left")
    for name in ("score", "scorer", "entity", "run", "created_at (UTC)", "reason", "input"):
        table.add_column(name, justify="right" if name == "score" else "left", overflow="fold")
    for w in worst:
        table.add_row(
            _num(w.score),
            w.scorer_id,
            w.entity or "-",
            w.run_id,
            w.created_at[:19],
            _short(w.reason or "", 60),
            _short(w.input or "-", 60),
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
        table.add_column("cost $", justify="right")
        table.add_column("top error")
    for group in groups:
        cells = [str(group.key.get(k) or "-") for k in keys]
        cells += [str(group.count), _num(group.mean), _num(group.stdev), _num(group.min), _num(group.max)]
        cells.append(f"{group.failures} ({group.failure_rate:.0%})" if group.failures else "0")
        if extra:
            cells += [str(group.tokens), _num(group.cost_usd, 4), group.top_error or ""]
        table.add_row(*cells)
    console.print(table)
