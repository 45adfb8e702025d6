"""Results of ``run_evals``: per-item results, per-scorer statistics, and the overall verdict."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from agentevals._evals._config import ScorerPlan, ScorerSpec
from agentevals._evals._data import EvalItem
from agentevals._evals._format import number, share, shorten
from agentevals._model._result import ScoreFailure, ScoreRecord, ScoreSkipped
from agentevals._model._run import Run
from agentevals._model._thresholds import Threshold

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

Verdict = Literal["passed", "below_threshold", "errored", "interrupted"]


@dataclass(frozen=True)
class ItemResult:
    """One item (one repeat of it): the run the target produced and every scorer's record.

    ``results`` is keyed like ``EvalResult.summary.scorers``: ``scorer_id`` for whole-target scorers and
    ``"node/scorer_id"`` for step scorers. ``error`` is the target's error (``"Type: message"``), if any.
    """

    item: EvalItem
    repeat: int
    run: Run
    target_result: Any
    results: dict[str, ScoreRecord]
    error: str | None
    passed: bool
    nested: bool = False
    steps: tuple[str, ...] = ()  # the graph nodes (steps) that ran
    step_keys: dict[str, tuple[str, str]] = field(default_factory=dict, repr=False)

    @property
    def index(self) -> int:
        return self.item.index

    @property
    def input(self) -> Any:
        return self.item.input

    @property
    def output(self) -> Any:
        return self.run.output

    @property
    def scores(self) -> dict[str, float | None]:
        """Each scorer's score (``None`` when it failed or skipped the run)."""
        return {key: record.score for key, record in self.results.items()}

    @property
    def failures(self) -> list[ScoreFailure]:
        return [r for r in self.results.values() if isinstance(r, ScoreFailure)]

    @property
    def scorer_results(self) -> dict[str, Any]:
        """Each scorer's record: ``{id: record}``, or ``{"workflow": {...}, "steps": {...}}`` when steps
        have scorers of their own."""
        top = {k: r for k, r in self.results.items() if k not in self.step_keys}
        if not self.nested:
            return top
        steps: dict[str, dict[str, ScoreRecord]] = defaultdict(dict)
        for key, (node, scorer_id) in self.step_keys.items():
            if key in self.results:
                steps[node][scorer_id] = self.results[key]
        return {"workflow": top, "steps": dict(steps)}


@dataclass(frozen=True)
class ScorerStats:
    """Statistics of one scorer over all items and repeats.

    ``mean``/``stdev``/``min``/``max`` are over successful scores (``None`` when there are none);
    ``repeat_stdev`` is the mean per-item standard deviation across repeats (how repeatable scores are);
    ``pass_rate`` is ``passes / (count + errors)``: the share of the item runs it scored or errored on
    whose score met the threshold (an errored run counts as not passed; a skipped one is left out);
    ``passed`` says whether the mean met the threshold (``None`` without a threshold). A gate must average
    exactly 1.0 and counts a failed run as 0. ``skipped`` counts the item runs the scorer skipped (an
    input it needs was absent, e.g. no ground truth): they are neither scores nor errors, and stay out of
    the mean, the pass rate and the gate.
    """

    key: str
    scorer_id: str
    scorer_name: str
    step: str | None
    count: int
    errors: int
    mean: float | None
    stdev: float | None
    min: float | None
    max: float | None
    repeat_stdev: float | None = None
    threshold: Threshold | None = None
    pass_rate: float | None = None
    passes: int | None = None
    passed: bool | None = None
    gate: bool = False
    skipped: int = 0


@dataclass(frozen=True)
class EvalSummary:
    """Counts over the whole run. Each item run (an item, once per repeat) either passed, errored (a
    target or scorer error) or fell below a threshold: ``passed_runs + errored_runs +
    below_threshold_runs == total_runs``, and :attr:`pass_rate` is ``passed_runs / total_runs`` (an
    errored run counts as not passed).

    ``eval_id`` is also in every record's ``metadata["eval_id"]``, to find this evaluation in a store.
    """

    total_items: int
    total_runs: int
    passed_runs: int
    errored_runs: int
    below_threshold_runs: int
    target_errors: int
    scorer_errors: int
    duration_ms: float
    scorers: dict[str, ScorerStats]
    sink_errors: int = 0
    warnings: tuple[str, ...] = ()
    eval_id: str = ""

    @property
    def pass_rate(self) -> float | None:
        return self.passed_runs / self.total_runs if self.total_runs else None

    def outcome_text(self) -> str:
        """The pass rate with its denominator, e.g. ``"38/40 (95.0%) runs passed; 2 errored (counted as
        not passed), 0 below threshold"``."""
        return (
            f"{share(self.passed_runs, self.total_runs)} runs passed; {self.errored_runs} errored "
            f"(counted as not passed), {self.below_threshold_runs} below threshold"
        )


@dataclass(frozen=True)
class EvalResult:
    """What ``run_evals`` returns.

    ``scores`` holds each scorer's mean (``None`` when it never produced a score), nested as
    ``{"workflow": {...}, "steps": {node: {...}}}`` for a workflow config. ``verdict`` is ``"errored"``
    when any item errored, ``"below_threshold"`` when a threshold or gate was missed, ``"interrupted"``
    when the run was stopped early (Ctrl-C: everything covers the items done only), else ``"passed"``.
    """

    scores: dict[str, Any]
    summary: EvalSummary
    items: list[ItemResult] = field(repr=False)
    verdict: Verdict
    interrupted: bool = False

    @property
    def passed(self) -> bool:
        return self.verdict == "passed"

    @property
    def stats(self) -> dict[str, ScorerStats]:
        return self.summary.scorers

    @property
    def failed_thresholds(self) -> list[ScorerStats]:
        """Scorers (and gates) whose threshold was missed."""
        return [s for s in self.summary.scorers.values() if s.passed is False]

    def to_records(self) -> list[ScoreRecord]:
        """Every score record of the evaluation (results, failures and skips), flat, in item order (each
        item's records in scorer order): what a sink received, e.g. for a DataFrame.

        >>> from agentevals.evals import run_evals
        >>> from agentevals.scorers import create_exact_match_scorer
        >>> result = run_evals([{"input": "a", "ground_truth": "A"}], [create_exact_match_scorer()],
        ...                    str.upper, progress=False)
        >>> [(r.scorer_id, r.score) for r in result.to_records()]
        [('exact_match', 1.0)]
        """
        return [record for item in self.items for record in item.results.values()]

    def print(self, *, max_failures: int = 10) -> None:
        """Print the summary table ``agentevals eval`` prints (per-scorer statistics, failing items, the
        verdict) to stdout with rich; ``rich.print(result)`` prints the same."""
        from rich.console import Console

        console = Console()
        if not console.is_terminal and not console.is_jupyter:  # a file or a pipe: room for every column
            console.width = max(console.width, 160)
        render_eval(self, console, max_failures=max_failures)

    def __rich__(self) -> Any:
        from rich.console import Group

        return Group(*eval_renderables(self))


def item_passed(results: dict[str, ScoreRecord], plan: ScorerPlan, error: str | None) -> bool:
    """An item run passes when nothing failed and every thresholded score met its threshold (a skipped
    scorer neither passes nor fails it)."""
    if error is not None:
        return False
    for spec in plan.specs:
        record = results.get(spec.key)
        if record is None:
            continue  # a step that did not run in this item
        if isinstance(record, ScoreFailure):
            return False
        if isinstance(record, ScoreSkipped):
            continue
        if spec.threshold is not None and not spec.threshold.check(record.score):
            return False
    return True


def summarize(
    items: list[ItemResult],
    plan: ScorerPlan,
    *,
    total_items: int,
    duration_ms: float,
    sink_errors: int = 0,
    eval_id: str = "",
    interrupted: bool = False,
) -> EvalResult:
    """Aggregate item results into per-scorer statistics, the ``scores`` mapping and the verdict."""
    stats = {spec.key: _stats(spec, items) for spec in plan.specs}
    errored = sum(1 for i in items if i.error is not None or i.failures)
    passed = sum(1 for i in items if i.passed)
    scorer_errors = sum(len(i.failures) for i in items if i.error is None)
    seen_steps = {name for i in items for name in i.steps}
    warnings = tuple(
        f"step {spec.step!r} never ran, so {spec.scorer.id!r} scored nothing; "
        f"steps seen: {sorted(seen_steps)}"
        for spec in plan.steps
        if stats[spec.key].count == 0 and stats[spec.key].errors == 0 and stats[spec.key].skipped == 0
    )
    summary = EvalSummary(
        total_items=total_items,
        total_runs=len(items),
        passed_runs=passed,
        errored_runs=errored,
        below_threshold_runs=len(items) - passed - errored,
        target_errors=sum(1 for i in items if i.error is not None),
        scorer_errors=scorer_errors,
        duration_ms=duration_ms,
        scorers=stats,
        sink_errors=sink_errors,
        warnings=warnings,
        eval_id=eval_id,
    )
    return EvalResult(
        scores=_scores(plan, stats),
        summary=summary,
        items=items,
        verdict=_verdict(stats, bool(errored), interrupted),
        interrupted=interrupted,
    )


def _stats(spec: ScorerSpec, items: list[ItemResult]) -> ScorerStats:
    every = [r for i in items if (r := i.results.get(spec.key)) is not None]
    records = [r for r in every if not isinstance(r, ScoreSkipped)]  # skipped: neither scored nor failed
    scores = [r.score for r in records if r.score is not None]
    errors = len(records) - len(scores)
    mean = statistics.fmean(scores) if scores else None
    pass_rate = passes = passed = None
    if spec.threshold is not None:
        passes = sum(1 for r in records if r.score is not None and spec.threshold.check(r.score))
        pass_rate = passes / len(records) if records else None
        if spec.gate:
            all_scores = [r.score if r.score is not None else 0.0 for r in records]
            passed = bool(all_scores) and statistics.fmean(all_scores) >= 1.0
        else:
            passed = spec.threshold.check(mean)
    return ScorerStats(
        key=spec.key,
        scorer_id=spec.scorer.id,
        scorer_name=spec.scorer.name,
        step=spec.step,
        count=len(scores),
        errors=errors,
        mean=mean,
        stdev=statistics.stdev(scores) if len(scores) > 1 else None,
        min=min(scores) if scores else None,
        max=max(scores) if scores else None,
        repeat_stdev=_repeat_stdev(spec.key, items),
        threshold=spec.threshold,
        pass_rate=pass_rate,
        passes=passes,
        passed=passed,
        gate=spec.gate,
        skipped=len(every) - len(records),
    )


def _repeat_stdev(key: str, items: list[ItemResult]) -> float | None:
    by_item: dict[int, list[float]] = defaultdict(list)
    for item in items:
        record = item.results.get(key)
        if record is not None and record.score is not None:
            by_item[item.index].append(record.score)
    spreads = [statistics.stdev(v) for v in by_item.values() if len(v) > 1]
    return statistics.fmean(spreads) if spreads else None


def _scores(plan: ScorerPlan, stats: dict[str, ScorerStats]) -> dict[str, Any]:
    top = {s.scorer.id: stats[s.key].mean for s in plan.top}
    if not plan.nested:
        return top
    steps: dict[str, dict[str, float | None]] = defaultdict(dict)
    for spec in plan.steps:
        assert spec.step is not None
        steps[spec.step][spec.scorer.id] = stats[spec.key].mean
    return {"workflow": top, "steps": dict(steps)}


def _verdict(stats: dict[str, ScorerStats], errors: bool, interrupted: bool) -> Verdict:
    if interrupted:
        return "interrupted"
    if errors:
        return "errored"
    if any(s.passed is False for s in stats.values()):
        return "below_threshold"
    return "passed"


# -- tables -----------------------------------------------------------------------------------------


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
            number(stats.mean),
            number(stats.stdev),
            number(stats.min),
            number(stats.max),
            _pass_rate(stats),
            _threshold(stats),
            str(stats.errors),
            str(stats.skipped),
        )
    out: list[RenderableType] = [table]
    failing = [i for i in result.items if not i.passed]
    for item in failing[:max_failures]:
        detail = item.error or "; ".join(
            f"{key}={number(record.score)}" + (f" ({record.reason})" if record.reason else "")
            if record.ok
            else f"{key}: {record.error_type}: {record.error_message}"  # type: ignore[union-attr]
            for key, record in item.results.items()
        )
        line = Text.from_markup(
            "[red]✗[/red] item " + str(item.index) + (f" (repeat {item.repeat})" if item.repeat else "") + " "
        )
        line.append(f"input={shorten(item.input)}: {detail}")  # user text: never markup
        out.append(line)
    if len(failing) > max_failures:
        out.append(f"... and {len(failing) - max_failures} more failing items")
    for warning in result.summary.warnings:
        out.append(Text.from_markup("[yellow]warning:[/yellow] ").append(warning))
    summary = result.summary
    colour = {"passed": "green", "below_threshold": "yellow", "errored": "red", "interrupted": "red"}
    out.append(
        f"{summary.total_items} items, {summary.total_runs} runs: {summary.outcome_text()}; "
        f"{summary.duration_ms / 1000:.2f} s: "
        f"[bold {colour[result.verdict]}]{result.verdict}[/bold {colour[result.verdict]}]"
    )
    return out


def _pass_rate(stats: ScorerStats) -> str:
    """``"passes/runs (share)"``: the runs it scored or errored on, errors counted as not passed."""
    if stats.passes is None:
        return "-"
    return share(stats.passes, stats.count + stats.errors)


def _label(stats: ScorerStats) -> str:
    return f"{stats.key} (gate)" if stats.gate else stats.key


def _threshold(stats: ScorerStats) -> str:
    if stats.threshold is None:
        return ""
    mark = "[green]✓[/green]" if stats.passed else "[red]✗[/red]"
    return f"{stats.threshold} {mark}"
