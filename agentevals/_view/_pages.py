"""What each page shows, as plain data for its template (and for the charts, as JSON-ready dicts).

Everything comes from :mod:`agentevals._view._queries`: the overview and scorer pages from the rollup and
the score histogram the store's triggers keep (the score rows where those cannot answer), the slow parts
that need the rows (each scorer's covered runs, the worst scores, a scorer's breakdowns by agent model
and scorer version) apart, for the pages to load after they show. Independent queries of a page run at
once, each on its own connection (:meth:`Reader.parallel`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

from agentevals._view import _stats
from agentevals._view._queries import PAGE_SIZE, Binned, Bucket, Filters, Outcomes, Reader, Session, Totals
from agentevals._view._transcript import context, loads, pretty, transcript

#: The threshold a score must reach to pass when none is given for its scorer (``--threshold``).
DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class Settings:
    """How scores are judged: per-scorer pass thresholds (others use ``default``)."""

    thresholds: dict[str, float] = field(default_factory=dict)
    default: float = DEFAULT_THRESHOLD

    def key(self) -> tuple[Any, ...]:
        """A hashable form (for cache keys)."""
        return (tuple(sorted(self.thresholds.items())), self.default)

    def threshold(self, scorer_id: str) -> float:
        return self.thresholds.get(scorer_id, self.default)


def epoch(bucket: str) -> int:
    """Seconds since 1970 of a bucket label (``2026-01-02`` or ``2026-01-02T03:00``), UTC."""
    return int(datetime.fromisoformat(bucket).replace(tzinfo=UTC).timestamp())


def _summary(bins: list[tuple[float, int]], passed: int) -> dict[str, Any]:
    n = sum(count for _, count in bins)
    return {
        "scored": n,
        "mean": _stats.mean(bins),
        "p10": _stats.percentile(bins, 0.1),
        "p50": _stats.percentile(bins, 0.5),
        "pass_rate": passed / n if n else None,
    }


def overview(reader: Reader, f: Filters, settings: Settings, *, deferred: bool = False) -> dict[str, Any]:
    """Per scorer: volume by outcome, mean, p10/p50, pass rate, errors by type, skip reasons, judge cost,
    a daily-mean sparkline, its coverage of the stored runs; and the worst scores. Read from the rollup
    and the score histogram (percentiles to 0.01, the mean exact) unless the filters or thresholds need
    the score rows. ``deferred`` leaves out the slow parts, the runs each scorer covers and the worst
    scores (the page loads them from :func:`overview_deferred` after it shows)."""
    rolled = f.eval_id is None
    with reader.session() as q:
        middle = q.middle_hour() if rolled else None
    totals, histogram, later, store_runs = reader.parallel(
        [
            lambda q: q.outcome_totals(f),
            # the histogram in two halves of its hours, at once (a grouped read of every bin row)
            lambda q: q.histogram(f, (None, middle)) if rolled else None,
            lambda q: q.histogram(f, (middle, None)) if rolled and middle is not None else [],
            lambda q: q.stored_runs(f.since),
        ]
    )
    binned = None if histogram is None else _from_histogram(totals, histogram + later, settings)
    if binned is None:
        with reader.session() as q:
            binned = _from_rows(q.bins(f, settings.thresholds, settings.default))
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
                "threshold": settings.threshold(scorer_id),
                "cost_usd": sum(t.cost for t in mine) if any(t.priced for t in mine) else None,
                "tokens": sum(t.tokens for t in mine),
                "coverage": coverage.get(scorer_id),
                "skip_reasons": dict(skips.most_common()),
                **_summary(bins[scorer_id], passed[scorer_id]),
                "mean": sum(t.total for t in mine) / scored if scored else None,
            }
        )
    return {
        "scorers": scorers,
        "charts": {f"spark-{s}": sparklines.get(s, {"x": [], "y": []}) for s in outcomes},
        "store_runs": store_runs,
        "worst": extra.get("worst", []),
        "entity_note": bool(f.entity),
        "deferred": deferred,
    }


def overview_deferred(reader: Reader, f: Filters) -> dict[str, Any]:
    """What a ``deferred`` overview leaves out: per scorer its coverage of the stored runs (as ``agentevals
    report`` counts it: since ``f.since``, every entity), and the worst scores. Each scorer's runs are
    counted on a connection of its own, all at once."""
    with reader.session() as q:
        names = q.scorers_since(f.since)
    jobs: list[Callable[[Session], Any]] = [
        lambda q: q.stored_runs(f.since),
        lambda q: _worst(q, f),
        *(partial(_covered, scorer_id=name, since=f.since) for name in names),
    ]
    store_runs, worst, *covered = reader.parallel(jobs)
    coverage = {
        name: {"runs": runs, "store_runs": store_runs, "share": runs / store_runs if store_runs else None}
        for name, (rows, runs) in zip(names, covered, strict=True)
        if rows
    }
    return {"coverage": coverage, "worst": worst}


def _covered(q: Session, scorer_id: str, since: datetime | None) -> tuple[int, int]:
    return q.covered_runs(scorer_id, since)


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
    """The same from the rollup's totals and the histogram's bins (``None`` when they cannot tell: a
    threshold that is not a whole bin in 0.01..0.99, or scores outside 0..1, which the end bins clamp).
    A percentile is its bin's lower edge, kept within the scorer's exact lowest and highest score."""
    edges: dict[str, int] = {}
    for scorer_id in {t.scorer_id for t in totals}:
        edge = _edge(settings.threshold(scorer_id))
        if edge is None:
            return None
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
        if index >= edges.get(scorer_id, 100):
            passed[scorer_id] += n
    return outcomes, errors, bins, passed


def _daily(totals: list[Outcomes]) -> dict[str, dict[str, list[Any]]]:
    """Each scorer's daily mean (a sparkline) from :meth:`Session.outcome_totals`."""
    sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0])
    for t in totals:
        sums[t.scorer_id, t.day][0] += t.total
        sums[t.scorer_id, t.day][1] += t.scores
    out: dict[str, dict[str, list[Any]]] = defaultdict(lambda: {"x": [], "y": []})
    for (scorer_id, day), (total, count) in sorted(sums.items()):
        if count:
            out[scorer_id]["x"].append(epoch(day))
            out[scorer_id]["y"].append(round(total / count, 4))
    return dict(out)


def _edge(threshold: float) -> int | None:
    """The score histogram's bin that starts at ``threshold`` (``None``: not a whole bin in 0.01..0.99,
    so the histogram cannot count the scores at or above it)."""
    edge = threshold * 100
    return round(edge) if 1 <= round(edge) <= 99 and abs(edge - round(edge)) < 1e-6 else None


class _Acc:
    """One scorer's numbers in one time bucket (or in all): rows, scores and their sum, judge cost and
    tokens, extremes, and the scores as ``(value, count)`` pairs (a histogram bin's count at its
    lower edge: its percentiles are then kept within the exact extremes)."""

    __slots__ = ("bins", "cost", "high", "low", "priced", "rows", "scores", "tokens", "total")

    def __init__(self) -> None:
        self.rows = self.scores = self.priced = self.tokens = 0
        self.total = self.cost = 0.0
        self.low: float | None = None
        self.high: float | None = None
        self.bins: list[tuple[float, int]] = []

    def add(self, rows: int, scores: int, total: float, priced: int, cost: float, tokens: int) -> None:
        self.rows += rows
        self.scores += scores
        self.total += total
        self.priced += priced
        self.cost += cost
        self.tokens += tokens

    def extremes(self, low: float | None, high: float | None) -> None:
        if low is not None:
            self.low = low if self.low is None else min(self.low, low)
        if high is not None:
            self.high = high if self.high is None else max(self.high, high)

    def percentiles(self, *qs: float) -> list[float | None]:
        out = []
        for value in _stats.percentiles(self.bins, qs):
            if value is not None and self.low is not None and self.high is not None:
                value = min(max(value, self.low), self.high)
            out.append(value)
        return out

    def point(self, key: str) -> dict[str, Any]:
        p10, p50, p90 = self.percentiles(0.1, 0.5, 0.9)
        return {
            "x": epoch(key),
            "mean": round(self.total / self.scores, 4) if self.scores else None,
            "p10": p10,
            "p50": p50,
            "p90": p90,
            "cost": self.cost if self.priced else None,
            "tokens": self.tokens,
        }


@dataclass
class _Numbers:
    """What a scorer page shows, gathered from the rollup and histogram or from the score rows."""

    outcomes: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    buckets: dict[str, _Acc] = field(default_factory=lambda: defaultdict(_Acc))
    whole: _Acc = field(default_factory=_Acc)
    passed: int = 0
    entities: list[tuple[str | None, int, float, int, int]] = field(default_factory=list)

    def count(self, outcome: str, error_type: str | None, rows: int) -> None:
        self.outcomes[outcome] += rows
        if outcome == "failed":
            self.errors[error_type or "error"] += rows


def _from_aggregates(totals: list[Totals], histogram: list[tuple[str, int, int]], edge: int) -> _Numbers:
    """A scorer page's numbers from :meth:`Session.scorer_totals` and :meth:`Session.scorer_bins`
    (scores in 0..1; ``edge``: the threshold's bin)."""
    out = _Numbers()
    entities: dict[str | None, list[Any]] = {}
    for t in totals:
        out.count(t.outcome, t.error_type, t.rows)
        for acc in (out.buckets[t.bucket], out.whole):
            acc.add(t.rows, t.scores, t.total, t.priced, t.cost, t.tokens)
            acc.extremes(t.low, t.high)
        e = entities.setdefault(t.entity, [t.entity, 0, 0.0, 0, 0])
        e[1] += t.rows
        e[2] += t.total
        e[3] += t.scores
        e[4] += t.rows if t.outcome == "failed" else 0
    out.entities = [(k, n, total, scored, failed) for k, n, total, scored, failed in entities.values()]
    whole: Counter[int] = Counter()
    buckets = out.buckets
    for key, index, n in histogram:
        buckets[key].bins.append((index / 100, n))
        whole[index] += n
    out.whole.bins = [(index / 100, n) for index, n in whole.items()]
    out.passed = sum(n for index, n in whole.items() if index >= edge)
    return out


def _from_series(series: list[Binned], entities: list[tuple[str | None, int, float, int, int]]) -> _Numbers:
    """A scorer page's numbers from :meth:`Session.series` and :meth:`Session.by_entity` (the rows)."""
    out = _Numbers(entities=entities)
    for b in series:
        out.count(b.outcome, b.error_type, b.rows)
        for acc in (out.buckets[b.bucket], out.whole):
            scored = 0 if b.value is None else b.rows
            acc.add(b.rows, scored, b.total, b.cost is not None, b.cost or 0.0, b.tokens)
            if b.value is not None:
                acc.bins.append((b.value, b.rows))
        out.passed += b.passed
    return out


def _in_range(totals: list[Totals]) -> bool:
    """Whether every score lies in 0..1 (the histogram's bins clamp the others)."""
    return all((t.low is None or t.low >= 0.0) and (t.high is None or t.high <= 1.0) for t in totals)


Versions = list[tuple[str | None, str | None, int, float, int, int]]


def scorer(
    reader: Reader, scorer_id: str, f: Filters, bucket: Bucket, settings: Settings, *, deferred: bool = False
) -> dict[str, Any]:
    """One scorer: score over time with a p10-p90 band, histogram, breakdowns, failures, judge cost.
    Read from the rollup and the score histogram (percentiles to 0.01, means, counts and costs exact)
    beside one grouped scan of the scorer's rows for its versions and agent models; from the rows when
    an eval id is filtered, the threshold is not a whole bin or a score lies outside 0..1.
    ``deferred`` leaves out that scan, the breakdowns by agent model and scorer version (the page
    loads them from :func:`scorer_deferred` after it shows)."""
    threshold = settings.threshold(scorer_id)
    edge = _edge(threshold)
    versions: Callable[[Session], Versions | None] = (
        (lambda q: None) if deferred else (lambda q: q.by_version_and_models(scorer_id, f))
    )
    by_rows = [lambda q: q.series(scorer_id, f, bucket, threshold), lambda q: q.by_entity(scorer_id, f)]
    if f.eval_id is None and edge is not None:
        totals, histogram, grouped = reader.parallel(
            [
                lambda q: q.scorer_totals(scorer_id, f, bucket),
                lambda q: q.scorer_bins(scorer_id, f, bucket),
                versions,
            ]
        )
        if _in_range(totals):
            return _scorer_page(scorer_id, threshold, _from_aggregates(totals, histogram, edge), grouped)
        series, entities = reader.parallel(by_rows)
    else:
        series, entities, grouped = reader.parallel([*by_rows, versions])
    return _scorer_page(scorer_id, threshold, _from_series(series, entities), grouped)


def scorer_deferred(reader: Reader, scorer_id: str, f: Filters) -> dict[str, Any]:
    """What a ``deferred`` scorer page leaves out: its breakdowns by agent model and scorer version."""
    with reader.session() as q:
        return _by_versions(q.by_version_and_models(scorer_id, f))


def _by_versions(versions: Versions) -> dict[str, Any]:
    return {
        "agent model": [(_models(k), *rest) for k, *rest in _merge((m, *rest) for _, m, *rest in versions)],
        "scorer version": _merge((v, *rest) for v, _, *rest in versions),
    }


def _scorer_page(
    scorer_id: str, threshold: float, numbers: _Numbers, versions: Versions | None
) -> dict[str, Any]:
    whole = numbers.whole
    points = [numbers.buckets[key].point(key) for key in sorted(numbers.buckets)]
    edges, counts = _stats.histogram(whole.bins)
    p10, p50 = whole.percentiles(0.1, 0.5)
    summary = {
        "scored": whole.scores,
        "mean": whole.total / whole.scores if whole.scores else None,
        "p10": p10,
        "p50": p50,
        "pass_rate": numbers.passed / whole.scores if whole.scores else None,
    }
    entities = _merge((e, *rest) for e, *rest in numbers.entities)
    return {
        "id": scorer_id,
        "threshold": threshold,
        "outcomes": dict(numbers.outcomes),
        "errors": numbers.errors.most_common(),
        "summary": summary,
        "charts": {
            "trend": {name: [p[name] for p in points] for name in ("x", "mean", "p10", "p50", "p90")},
            "histogram": {"x": edges, "y": counts},
            "cost": {name: [p[name] for p in points] for name in ("x", "cost", "tokens")},
        },
        "breakdowns": {
            "agent or chain": entities,
            **(_by_versions(versions) if versions is not None else dict.fromkeys(_DEFERRED_BREAKDOWNS)),
        },
        "deferred": versions is None,
    }


_DEFERRED_BREAKDOWNS = ("agent model", "scorer version")


def _merge(groups: Iterable[tuple[Any, ...]]) -> list[tuple[str | None, int, float | None, int]]:
    """``(key, rows, mean, failures)`` per key of ``(key, rows, sum of scores, scores, failures)``
    groups, most rows first (at most 50)."""
    acc: dict[str | None, list[Any]] = {}
    for key, n, total, scored, failed in groups:
        a = acc.setdefault(key, [0, 0.0, 0, 0])
        a[0] += n
        a[1] += total
        a[2] += scored
        a[3] += failed
    rows = [
        (key, n, total / scored if scored else None, failed)
        for key, (n, total, scored, failed) in acc.items()
    ]
    return sorted(rows, key=lambda row: (-row[1], row[0] or ""))[:50]


def _models(stored: str | None) -> str | None:
    """A run's stored models (a JSON list) as ``a, b``."""
    models = loads(stored)
    return ", ".join(map(str, models)) if isinstance(models, list) else stored


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
        steps = []
        for step in _STEPS:
            prompt = s.get(f"{step}_prompt")
            result = s.get(f"{step}_step_result")
            if prompt is not None or result is not None:
                steps.append({"name": step, "prompt": prompt, "result": pretty(result) or None})
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


def _text(value: Any) -> str | None:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    return None if value is None else str(value)


def compare(reader: Reader, a: Filters, b: Filters, limit: int = 20) -> dict[str, Any]:
    """Per scorer: each side's mean, the delta with Welch's t hint; the items that regressed most."""
    moments_a, moments_b, items_a, items_b = reader.parallel(
        [lambda q: q.moments(a), lambda q: q.moments(b), lambda q: q.item_means(a), lambda q: q.item_means(b)]
    )
    side_a = {s: (n, t, sq) for s, n, t, sq in moments_a}
    side_b = {s: (n, t, sq) for s, n, t, sq in moments_b}
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
        "regressed": changed[:limit],
        "chart": {
            "labels": [s for s, _ in pairs],
            "a": [d.mean_a for _, d in pairs],
            "b": [d.mean_b for _, d in pairs],
        },
    }
