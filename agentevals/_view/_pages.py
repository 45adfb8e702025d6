"""What each page shows, as plain data for its template (and for the charts, as JSON-ready dicts).

Everything comes from :mod:`agentevals._view._queries`: the overview and scorer pages from the rollup and
the score histogram the store's triggers keep (the score rows where those cannot answer), the slow parts
that need the rows (each scorer's covered runs, the worst scores, a scorer's breakdowns by agent model
and scorer version) apart, for the pages to load after they show. Independent queries of a page run at
once, each on its own connection (:meth:`Reader.parallel`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any

from agentevals._evals._catalog import dropped_counts
from agentevals._model._thresholds import Threshold
from agentevals._store._reading import REJUDGED_SOURCE
from agentevals._view import _rolled, _scorer_numbers, _stats, _versions
from agentevals._view._axes import STEP, time_window
from agentevals._view._queries import PAGE_SIZE, Bucket, Filters, Reader, Session
from agentevals._view._rolled import Outcomes
from agentevals._view._thresholds import Bound
from agentevals._view._transcript import context, loads, pretty, transcript

#: The threshold a score must reach to pass when none is given for its scorer (``--threshold``).
DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class Settings:
    """How scores are judged: a scorer's pass threshold is ``thresholds`` (``--pass-threshold
    SCORER=MIN``), else ``default`` when ``default_given`` (``--pass-threshold MIN``), else ``stored``
    (what the store keeps, see :meth:`scoped`), else ``default``."""

    thresholds: dict[str, float] = field(default_factory=dict)
    default: float = DEFAULT_THRESHOLD
    default_given: bool = False
    stored: dict[str, Threshold] = field(default_factory=dict)

    def key(self) -> tuple[Any, ...]:
        """A hashable form (for cache keys)."""
        stored = tuple(sorted((k, t.min, t.max) for k, t in self.stored.items()))
        return (tuple(sorted(self.thresholds.items())), self.default, self.default_given, stored)

    def scoped(self, stored: dict[str, Threshold]) -> Settings:
        """These settings with the store's thresholds (for one page's scope)."""
        return replace(self, stored=stored)

    def bound(self, scorer_id: str) -> Bound:
        """The bounds a score of ``scorer_id`` must meet to pass, and where they came from."""
        if scorer_id in self.thresholds:
            return Bound(self.thresholds[scorer_id], None, "--pass-threshold")
        if not self.default_given and scorer_id in self.stored:
            threshold = self.stored[scorer_id]
            return Bound(threshold.min, threshold.max, "stored")
        return self.fallback()

    def fallback(self) -> Bound:
        """The bounds of a scorer with no threshold of its own."""
        return Bound(self.default, None, "--pass-threshold" if self.default_given else "default")

    def bounds(self) -> dict[str, Bound]:
        """The bounds of each scorer that has its own (the others: :meth:`fallback`)."""
        named = set(self.thresholds) | (set() if self.default_given else set(self.stored))
        return {scorer_id: self.bound(scorer_id) for scorer_id in named}


def _summary(bins: list[tuple[float, int]], passed: int, failed: int) -> dict[str, Any]:
    """A scorer's numbers; its pass rate counts a failed record as not passed (as ``run_evals`` does)."""
    n = sum(count for _, count in bins)
    return {
        "scored": n,
        "mean": _stats.mean(bins),
        "p10": _stats.percentile(bins, 0.1),
        "p50": _stats.percentile(bins, 0.5),
        "passed": passed,
        "pass_total": n + failed,
        "pass_rate": passed / (n + failed) if n + failed else None,
    }


def overview(reader: Reader, f: Filters, settings: Settings, *, deferred: bool = False) -> dict[str, Any]:
    """Per scorer: volume by outcome, mean, p10/p50, pass rate, errors by type, skip reasons, judge cost,
    a daily-mean sparkline, its coverage of the stored runs; and the worst scores. Read from the rollup
    and the score histogram (percentiles to 0.01, the mean exact) unless the filters or thresholds need
    the score rows. ``deferred`` leaves out the slow parts, the runs each scorer covers and the worst
    scores (the page loads them from :func:`overview_deferred` after it shows)."""
    parts: list[list[_rolled.Hours]] = []
    if f.eval_id is None:  # the histogram's days in two parts, read at once
        with reader.session() as q:
            parts = _rolled.hour_ranges(q, 2)
    totals, store_runs, canary_left_out, *read = reader.parallel(
        [
            lambda q: _rolled.outcome_totals(q, f),
            lambda q: q.stored_runs(f.since, f.eval_id),
            partial(_canary_left_out, f=f),
            *(partial(_rolled.histogram_over, f=f, ranges=ranges) for ranges in parts),
        ]
    )
    histogram = [row for rows in read for row in rows] if parts else None
    binned = None if histogram is None else _from_histogram(totals, histogram, settings)
    exact = [] if binned is None else [s for s in binned[0] if _edge(settings.bound(s)) is None]
    if binned is not None and exact:  # a threshold the bins cannot tell: its passes from the rows
        counts = reader.parallel(
            [partial(Session.passes, scorer=s, f=f, bounds=settings.bound(s).sql()) for s in exact]
        )
        binned[3].update(dict(zip(exact, counts, strict=True)))
    if binned is None:
        with reader.session() as q:
            bounds = {scorer_id: b.sql() for scorer_id, b in settings.bounds().items()}
            binned = _from_rows(q.bins(f, bounds, settings.fallback().sql()))
    outcomes, errors, bins, passed = binned
    extra = {} if deferred else overview_deferred(reader, f)
    coverage = extra.get("coverage", {})
    sparklines = _daily(totals)
    scorers = []
    for scorer_id in sorted(outcomes):
        mine = [t for t in totals if t.scorer_id == scorer_id]
        scored = sum(t.scores for t in mine)
        skips: Counter[str] = Counter()
        for t in mine:
            if t.outcome == "skipped":
                skips[t.skip_reason or "-"] += t.rows
        scorers.append(
            {
                "id": scorer_id,
                "count": sum(outcomes[scorer_id].values()),
                "outcomes": dict(outcomes[scorer_id]),
                "errors": errors[scorer_id].most_common(),
                "threshold": settings.bound(scorer_id),
                "cost_usd": sum(t.cost for t in mine) if any(t.priced for t in mine) else None,
                "tokens": sum(t.tokens for t in mine),
                "coverage": coverage.get(scorer_id),
                "dropped": _dropped_of(extra.get("dropped"), scorer_id),
                "skip_reasons": dict(skips.most_common()),
                **_summary(bins[scorer_id], passed[scorer_id], outcomes[scorer_id]["failed"]),
                "mean": sum(t.total for t in mine) / scored if scored else None,
            }
        )
    return {
        "scorers": scorers,
        "charts": {f"spark-{s}": _spark(sparklines.get(s, {"x": [], "y": []})) for s in outcomes},
        "store_runs": store_runs,
        "worst": extra.get("worst", []),
        "entity_note": bool(f.entity),
        "canary_left_out": canary_left_out,
        "deferred": deferred,
    }


def _canary_left_out(q: Session, f: Filters) -> int:
    """How many canary records the pages leave out under ``f`` (they judge labelled runs again); none
    when ``f`` names a source or an evaluation."""
    if f.source is not None or f.eval_id is not None:
        return 0
    return sum(t.rows for t in _rolled.outcome_totals(q, replace(f, source=REJUDGED_SOURCE)))


def overview_deferred(reader: Reader, f: Filters) -> dict[str, Any]:
    """What a ``deferred`` overview leaves out: per scorer its coverage of the stored runs (as ``agentevals
    report`` counts it: since ``f.since``, every entity) and the runs the engine dropped before it could
    score them (under the time range and entity; ``None`` when an eval id is filtered: drops belong to
    no evaluation), and the worst scores. Each scorer's runs are counted on a connection of its own,
    all at once."""
    with reader.session() as q:
        names = q.scorers_since(f.since)
    jobs: list[Callable[[Session], Any]] = [
        lambda q: q.stored_runs(f.since, f.eval_id),
        lambda q: _worst(q, f),
        *(partial(_covered, scorer_id=name, since=f.since, eval_id=f.eval_id) for name in names),
    ]
    store_runs, worst, *covered = reader.parallel(jobs)
    coverage = {
        name: {"runs": runs, "store_runs": store_runs, "share": runs / store_runs if store_runs else None}
        for name, (rows, runs) in zip(names, covered, strict=True)
        if rows
    }
    dropped = None
    if f.eval_id is None:
        dropped = reader.with_store(
            lambda store: dropped_counts(store, since=f.since, until=f.until, entity=f.entity)
        )
    return {"coverage": coverage, "dropped": dropped, "names": names, "worst": worst}


def _dropped_of(dropped: dict[str, int] | None, scorer_id: str) -> int | None:
    """A scorer's dropped runs (0 when none; ``None`` when drops do not apply)."""
    return None if dropped is None else dropped.get(scorer_id, 0)


def _covered(q: Session, scorer_id: str, since: datetime | None, eval_id: str | None) -> tuple[int, int]:
    return q.covered_runs(scorer_id, since, eval_id)


def _worst(q: Session, f: Filters) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = runs(q, f, 0, outcome="scored")["rows"][:10]
    return rows


_Binned = tuple[
    dict[str, Counter[str]],
    dict[str, Counter[str]],
    dict[str, list[tuple[float, int]]],
    Counter[str],
]


def _from_rows(binned: list[tuple[str, str, str | None, float | None, int, int]]) -> _Binned:
    """Outcomes, errors, binned scores and passes per scorer from :meth:`Session.bins` (the score rows)."""
    bins: dict[str, list[tuple[float, int]]] = defaultdict(list)
    outcomes: dict[str, Counter[str]] = defaultdict(Counter)
    errors: dict[str, Counter[str]] = defaultdict(Counter)
    passed: Counter[str] = Counter()
    for scorer_id, outcome, error_type, value, n, ok in binned:
        outcomes[scorer_id][outcome] += n
        if outcome == "failed":
            errors[scorer_id][error_type or "error"] += n
        if value is not None:
            bins[scorer_id].append((value, n))
            passed[scorer_id] += ok
    return outcomes, errors, bins, passed


def _from_histogram(
    totals: list[Outcomes], histogram: list[tuple[str, int, int]], settings: Settings
) -> _Binned | None:
    """The same from the rollup's totals and the histogram's bins (``None`` when they cannot tell:
    scores outside 0..1, which the end bins clamp). The passes of a scorer whose threshold is not a
    whole bin in 0.01..0.99 or has a maximum are left out (:func:`overview` counts them from the rows).
    A percentile is its bin's lower edge, kept within the scorer's exact lowest and highest score."""
    edges: dict[str, int] = {}  # the scorers whose passes the bins can tell
    for scorer_id in {t.scorer_id for t in totals}:
        edge = _edge(settings.bound(scorer_id))
        if edge is not None:
            edges[scorer_id] = edge
    outcomes: dict[str, Counter[str]] = defaultdict(Counter)
    errors: dict[str, Counter[str]] = defaultdict(Counter)
    lows: dict[str, float] = {}
    highs: dict[str, float] = {}
    for t in totals:
        outcomes[t.scorer_id][t.outcome] += t.rows
        if t.outcome == "failed":
            errors[t.scorer_id][t.error_type or "error"] += t.rows
        if t.low is not None and t.high is not None:
            lows[t.scorer_id] = min(t.low, lows.get(t.scorer_id, t.low))
            highs[t.scorer_id] = max(t.high, highs.get(t.scorer_id, t.high))
    if any(v < 0.0 for v in lows.values()) or any(v > 1.0 for v in highs.values()):
        return None
    bins: dict[str, list[tuple[float, int]]] = defaultdict(list)
    passed: Counter[str] = Counter()
    for scorer_id, index, n in histogram:
        value = min(max(index / 100, lows.get(scorer_id, 0.0)), highs.get(scorer_id, 1.0))
        bins[scorer_id].append((value, n))
        if scorer_id in edges and index >= edges[scorer_id]:
            passed[scorer_id] += n
    return outcomes, errors, bins, passed


def _edge(bound: Bound) -> int | None:
    """The histogram bin a passing score starts at (``None``: the bins cannot tell a pass)."""
    if bound.high is not None or bound.low is None:
        return None
    return _stats.threshold_bin(bound.low)


def _daily(totals: list[Outcomes]) -> dict[str, dict[str, list[Any]]]:
    """Each scorer's daily mean (a sparkline) from :func:`_rolled.outcome_totals`."""
    sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0])
    for t in totals:
        sums[t.scorer_id, t.day][0] += t.total
        sums[t.scorer_id, t.day][1] += t.scores
    out: dict[str, dict[str, list[Any]]] = defaultdict(lambda: {"x": [], "y": []})
    for (scorer_id, day), (total, count) in sorted(sums.items()):
        if count:
            out[scorer_id]["x"].append(_scorer_numbers.epoch(day))
            out[scorer_id]["y"].append(round(total / count, 4))
    return dict(out)


def _spark(line: dict[str, list[Any]]) -> dict[str, Any]:
    """A sparkline of daily means with its time axis (a lone day: a flat line over the days around it)."""
    return {**line, "window": time_window(line["x"], STEP["day"])}


def scorer(
    reader: Reader, scorer_id: str, f: Filters, bucket: Bucket, settings: Settings, *, deferred: bool = False
) -> dict[str, Any]:
    """One scorer: score over time with a p10-p90 band, histogram, breakdowns, failures, judge cost.
    Read from the rollup and the score histogram (percentiles to 0.01, means, counts and costs exact)
    beside one grouped scan of the scorer's rows for its versions and agent models; from the rows when
    an eval id is filtered or a score lies outside 0..1 (a threshold the bins cannot tell, not a whole
    bin or with a maximum: its passes counted from the rows).
    ``deferred`` leaves out that scan, the breakdowns by agent model and scorer version (the page
    loads them from :func:`scorer_deferred` after it shows)."""
    threshold = settings.bound(scorer_id)
    edge = _edge(threshold)
    versions: Callable[[Session], _scorer_numbers.Versions | None] = (
        (lambda q: None) if deferred else (lambda q: q.by_version_and_models(scorer_id, f))
    )
    by_rows = [lambda q: q.series(scorer_id, f, bucket, threshold.sql()), lambda q: q.by_entity(scorer_id, f)]
    if f.eval_id is None:
        exact: Callable[[Session], int | None] = (
            (lambda q: q.passes(scorer_id, f, threshold.sql())) if edge is None else (lambda q: None)
        )
        totals, histogram, grouped, passes = reader.parallel(
            [
                lambda q: _rolled.scorer_totals(q, scorer_id, f, bucket),
                lambda q: _rolled.scorer_bins(q, scorer_id, f, bucket),
                versions,
                exact,
            ]
        )
        if _scorer_numbers.in_range(totals):
            numbers = _scorer_numbers.from_aggregates(totals, histogram, edge)
            if passes is not None:  # a threshold the bins cannot tell: its passes from the rows
                numbers.passed = passes
            return _scorer_numbers.page(scorer_id, threshold, numbers, grouped, bucket)
        series, entities = reader.parallel(by_rows)
    else:
        series, entities, grouped = reader.parallel([*by_rows, versions])
    numbers = _scorer_numbers.from_series(series, entities)
    return _scorer_numbers.page(scorer_id, threshold, numbers, grouped, bucket)


def scorer_deferred(reader: Reader, scorer_id: str, f: Filters) -> dict[str, Any]:
    """What a ``deferred`` scorer page leaves out: its breakdowns by agent model and scorer version."""
    with reader.session() as q:
        return _scorer_numbers.by_versions(q.by_version_and_models(scorer_id, f))


def runs(q: Session, f: Filters, page: int, **narrow: Any) -> dict[str, Any]:
    """One page of score rows, worst first, with the start of each run's input."""
    rows = q.score_rows(f, page=page, **narrow)
    for row in rows:
        row["input"] = _input_text(row["input"])
    return {"rows": rows[:PAGE_SIZE], "page": page, "more": len(rows) > PAGE_SIZE}


def _input_text(stored: Any, limit: int = 160) -> str:
    entries = transcript({"input": stored})
    users = [e.content for e in entries if e.role in ("user", "human")] or [e.content for e in entries]
    text = " ".join((users[-1] if users else "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_STEPS = ("preprocess", "analyze", "generate_score", "generate_reason")


def run(q: Session, run_id: str) -> dict[str, Any] | None:
    """A run's transcript, context and every score record of it (steps, prompts, judge usage)."""
    row = q.run(run_id)
    scores = q.run_scores(run_id)
    if row is None and not scores:
        return None
    records = []
    for s in scores:
        replies = _replies(s.get("judge_replies"))
        steps = []
        for step in _STEPS:
            prompt = s.get(f"{step}_prompt")
            result = s.get(f"{step}_step_result")
            reply = replies.get(step)
            if prompt is not None or result is not None or reply is not None:
                steps.append(
                    {"name": step, "prompt": prompt, "reply": reply, "result": pretty(result) or None}
                )
        records.append(
            {**s, "steps": steps, "created_at": _text(s["created_at"]), "metadata": pretty(s["metadata"])}
        )
    info = (
        {} if row is None else {k: row[k] for k in ("entity", "source", "eval_id", "trace_id", "thread_id")}
    )
    if row is not None:
        info.update(
            models=", ".join(loads(row["models"]) or []),
            created_at=_text(row["created_at"]),
            duration_ms=row["duration_ms"],
            tokens=(row["input_tokens"], row["output_tokens"]),
            cost_usd=row["cost_usd"],
            error=row["error"],
        )
    return {
        "run_id": run_id,
        "stored": row is not None,
        "info": info,
        "messages": [] if row is None else transcript(row),
        "context": [] if row is None else context(row),
        "ground_truth": None if row is None else pretty(row["ground_truth"]) or None,
        "records": records,
    }


def unstored_run(run_id: str) -> dict[str, Any]:
    """The page of a run the store has labels of but neither the run nor a score record (a label
    imported for another store's run, or whose records were deleted): its labels can be read and deleted."""
    return {
        "run_id": run_id,
        "stored": False,
        "info": {},
        "messages": [],
        "context": [],
        "ground_truth": None,
        "records": [],
    }


def _replies(stored: Any) -> dict[str, str]:
    """A record's ``judge_replies`` (JSON text in SQLite, decoded in PostgreSQL; ``None`` when the
    scorer made no judge call) as ``{step: reply}``."""
    value = loads(stored)
    if not isinstance(value, dict):
        return {}
    return {str(step): reply if isinstance(reply, str) else pretty(reply) for step, reply in value.items()}


def _text(value: Any) -> str | None:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    return None if value is None else str(value)


def compare(reader: Reader, a: Filters, b: Filters, limit: int = 20) -> dict[str, Any]:
    """Per scorer: each side's mean, the delta with Welch's t hint; the scorers whose versions differ
    between the sides; the items that regressed most."""
    moments_a, moments_b, items_a, items_b = reader.parallel(
        [lambda q: q.moments(a), lambda q: q.moments(b), lambda q: q.item_means(a), lambda q: q.item_means(b)]
    )
    (side_a, versions_a), (side_b, versions_b) = _by_scorer(moments_a), _by_scorer(moments_b)
    empty: tuple[int, float | None, float | None] = (0, None, None)
    pairs = [
        (s, _stats.compare(side_a.get(s, empty), side_b.get(s, empty)))
        for s in sorted(side_a.keys() | side_b.keys())
    ]
    deltas = [{"scorer_id": s, "delta": d} for s, d in pairs]
    changed = []
    for key in items_a.keys() & items_b.keys():
        (mean_a, run_a), (mean_b, run_b) = items_a[key], items_b[key]
        if mean_b < mean_a:
            changed.append(
                {
                    "scorer_id": key[0],
                    "input": _input_text(key[1]),
                    "a": mean_a,
                    "b": mean_b,
                    "delta": mean_b - mean_a,
                    "run_a": run_a,
                    "run_b": run_b,
                }
            )
    changed.sort(key=lambda item: (item["delta"], item["scorer_id"], item["input"]))
    return {
        "deltas": deltas,
        "versions": _versions.differing(versions_a, versions_b),
        "regressed": changed[:limit],
        "chart": {
            "labels": [s for s, _ in pairs],
            "a": [d.mean_a for _, d in pairs],
            "b": [d.mean_b for _, d in pairs],
        },
    }


_Moments = tuple[int, float | None, float | None]


def _by_scorer(
    rows: list[tuple[str, str | None, int, float | None, float | None]],
) -> tuple[dict[str, _Moments], dict[str, set[str | None]]]:
    """Each scorer's ``(n, sum, sum of squares)`` over its versions, and its versions."""
    moments: dict[str, _Moments] = {}
    versions: dict[str, set[str | None]] = defaultdict(set)
    for scorer_id, version, n, total, squares in rows:
        before = moments.get(scorer_id, (0, None, None))
        moments[scorer_id] = (before[0] + n, _plus(before[1], total), _plus(before[2], squares))
        versions[scorer_id].add(version)
    return moments, dict(versions)


def _plus(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else a + b
