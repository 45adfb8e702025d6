"""What each page shows, as plain data for its template (and for the charts, as JSON-ready dicts).

The overview's coverage comes from :func:`agentevals._evals._report.build_report` (what ``agentevals
report`` prints); everything else from :mod:`agentevals._view._queries`. Independent queries of a page
run at once, each on its own connection (:meth:`Reader.parallel`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

from agentevals._view import _stats
from agentevals._view._queries import PAGE_SIZE, Bucket, Filters, Reader, Session
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
    """Per scorer: volume by outcome, mean, p10/p50, pass rate, errors by type, a daily-mean sparkline,
    its coverage of the stored runs; and the worst scores. Read from the rollup and the score histogram
    (percentiles to 0.01, the mean exact) unless the filters or thresholds need the score rows.
    ``deferred`` leaves out the slow parts, the runs each scorer covers and the worst scores (the
    page loads them from :func:`overview_deferred` after it shows)."""
    from agentevals._evals._report import build_report

    report, totals, histogram, worst = reader.parallel(
        [
            lambda q: build_report(
                reader.database, since=f.since, table=reader.tables.scores, worst=0, covered=not deferred
            ),
            lambda q: q.outcome_totals(f) if f.eval_id is None else None,
            lambda q: q.histogram(f) if f.eval_id is None else None,
            lambda q: [] if deferred else _worst(q, f),
        ]
    )
    binned = _from_histogram(totals, histogram, settings)
    if binned is None:
        with reader.session() as q:
            binned = _from_rows(q.bins(f, settings.thresholds, settings.default))
    outcomes, errors, bins, passed, means = binned
    cost = {g.key["scorer_id"]: (g.cost_usd, g.tokens) for g in report.by_scorer}
    coverage = {c.scorer_id: c for c in report.coverage}
    sparklines = _daily_means(reader, f, report) if f.entity else _report_daily(report)
    scorers = []
    for scorer_id in sorted(outcomes):
        cov = coverage.get(scorer_id)
        scorers.append(
            {
                "id": scorer_id,
                "count": sum(outcomes[scorer_id].values()),
                "outcomes": dict(outcomes[scorer_id]),
                "errors": errors[scorer_id].most_common(),
                "threshold": settings.threshold(scorer_id),
                "cost_usd": cost.get(scorer_id, (None, 0))[0],
                "tokens": cost.get(scorer_id, (None, 0))[1],
                "coverage": None if cov is None or deferred else _coverage(cov),
                "skip_reasons": {} if cov is None else cov.skip_reasons,
                **_summary(bins[scorer_id], passed[scorer_id]),
                **({"mean": means[scorer_id]} if scorer_id in means else {}),
            }
        )
    return {
        "scorers": scorers,
        "charts": {f"spark-{s}": sparklines.get(s, {"x": [], "y": []}) for s in outcomes},
        "store_runs": report.runs,
        "worst": worst,
        "entity_note": bool(f.entity),
        "deferred": deferred,
    }


def overview_deferred(reader: Reader, f: Filters) -> dict[str, Any]:
    """What a ``deferred`` overview leaves out: per scorer its coverage of the stored runs, and the
    worst scores."""
    from agentevals._evals._report import build_report

    report, worst = reader.parallel(
        [
            lambda q: build_report(reader.database, since=f.since, table=reader.tables.scores, worst=0),
            lambda q: _worst(q, f),
        ]
    )
    return {"coverage": {c.scorer_id: _coverage(c) for c in report.coverage}, "worst": worst}


def _coverage(cov: Any) -> dict[str, Any]:
    return {"runs": cov.runs, "store_runs": cov.store_runs, "share": cov.share}


def _worst(q: Session, f: Filters) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = runs(q, f, 0, outcome="scored")["rows"][:10]
    return rows


_Binned = tuple[
    dict[str, Counter[str]],
    dict[str, Counter[str]],
    dict[str, list[tuple[float, int]]],
    Counter[str],
    dict[str, float | None],
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
    return outcomes, errors, bins, passed, {}


def _from_histogram(totals: Any, histogram: Any, settings: Settings) -> _Binned | None:
    """The same from the rollup's totals and the histogram's bins (``None`` when they cannot tell: a
    threshold that is not a whole bin in 0.01..0.99, or scores outside 0..1, which the end bins clamp).
    A percentile is its bin's lower edge, kept within the scorer's exact lowest and highest score."""
    if totals is None or histogram is None:
        return None
    edges: dict[str, int] = {}
    for scorer_id in {row[0] for row in totals}:
        edge = settings.threshold(scorer_id) * 100
        if not (1 <= round(edge) <= 99 and abs(edge - round(edge)) < 1e-6):
            return None
        edges[scorer_id] = round(edge)
    outcomes: dict[str, Counter[str]] = defaultdict(Counter)
    errors: dict[str, Counter[str]] = defaultdict(Counter)
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    lows: dict[str, float] = {}
    highs: dict[str, float] = {}
    for scorer_id, outcome, error_type, rows, scores, total, low, high in totals:
        outcomes[scorer_id][outcome] += rows
        if outcome == "failed":
            errors[scorer_id][error_type or "error"] += rows
        sums[scorer_id][0] += total
        sums[scorer_id][1] += scores
        if low is not None and high is not None:
            lows[scorer_id] = min(low, lows.get(scorer_id, low))
            highs[scorer_id] = max(high, highs.get(scorer_id, high))
    if any(v < 0.0 for v in lows.values()) or any(v > 1.0 for v in highs.values()):
        return None
    bins: dict[str, list[tuple[float, int]]] = defaultdict(list)
    passed: Counter[str] = Counter()
    for scorer_id, index, n in histogram:
        value = min(max(index / 100, lows.get(scorer_id, 0.0)), highs.get(scorer_id, 1.0))
        bins[scorer_id].append((value, n))
        if index >= edges.get(scorer_id, 100):
            passed[scorer_id] += n
    means = {k: (total / n if n else None) for k, (total, n) in sums.items()}
    return outcomes, errors, bins, passed, means


def _report_daily(report: Any) -> dict[str, dict[str, list[Any]]]:
    out: dict[str, dict[str, list[Any]]] = defaultdict(lambda: {"x": [], "y": []})
    for group in report.by_day:
        if group.key["day"] is None or group.mean is None:
            continue
        line = out[str(group.key["scorer_id"])]
        line["x"].append(epoch(str(group.key["day"])))
        line["y"].append(round(group.mean, 4))
    return dict(out)


def _daily_means(reader: Reader, f: Filters, report: Any) -> dict[str, dict[str, list[Any]]]:
    names = sorted({str(g.key["scorer_id"]) for g in report.by_scorer})
    series = reader.parallel([partial(_daily, scorer_id=name, f=f) for name in names])
    return dict(zip(names, series, strict=True))


def _daily(q: Session, scorer_id: str, f: Filters) -> dict[str, list[Any]]:
    points = _buckets(q.series(scorer_id, f, "day", DEFAULT_THRESHOLD))
    return {"x": [p["x"] for p in points], "y": [p["mean"] for p in points]}


Series = list[tuple[str, str, str | None, float | None, int, int, float | None, int]]


def _buckets(rows: Series) -> list[dict[str, Any]]:
    """Per time bucket: score count, mean, p10/p50/p90, judge cost and tokens."""
    grouped: dict[str, dict[str, Any]] = {}
    for key, _, _, value, n, _, cost, tokens in rows:
        b = grouped.setdefault(key, {"bins": [], "rows": 0, "cost": None, "tokens": 0})
        b["rows"] += n
        b["tokens"] += tokens
        if cost is not None:
            b["cost"] = (b["cost"] or 0.0) + cost
        if value is not None:
            b["bins"].append((value, n))
    points = []
    for key in sorted(grouped):
        b = grouped[key]
        mean = _stats.mean(b["bins"])
        points.append(
            {
                "x": epoch(key),
                "label": key,
                "rows": b["rows"],
                "mean": None if mean is None else round(mean, 4),
                "p10": _stats.percentile(b["bins"], 0.1),
                "p50": _stats.percentile(b["bins"], 0.5),
                "p90": _stats.percentile(b["bins"], 0.9),
                "cost": b["cost"],
                "tokens": b["tokens"],
            }
        )
    return points


def scorer(reader: Reader, scorer_id: str, f: Filters, bucket: Bucket, settings: Settings) -> dict[str, Any]:
    """One scorer: score over time with a p10-p90 band, histogram, breakdowns, failures, judge cost."""
    threshold = settings.threshold(scorer_id)
    series, groups, by_models = reader.parallel(
        [
            lambda q: q.series(scorer_id, f, bucket, threshold),
            lambda q: q.breakdowns(scorer_id, f),
            lambda q: q.by_models(scorer_id, f),
        ]
    )
    merged: Counter[float] = Counter()
    outcomes: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    passed = 0
    for _, outcome, error_type, value, n, ok, _, _ in series:
        outcomes[outcome] += n
        if outcome == "failed":
            errors[error_type or "error"] += n
        if value is not None:
            merged[value] += n
            passed += ok
    bins = sorted(merged.items())
    points = _buckets(series)
    edges, counts = _stats.histogram(bins)
    return {
        "id": scorer_id,
        "threshold": threshold,
        "outcomes": dict(outcomes),
        "errors": errors.most_common(),
        "summary": _summary(bins, passed),
        "charts": {
            "trend": {
                "x": [p["x"] for p in points],
                "mean": [p["mean"] for p in points],
                "p10": [p["p10"] for p in points],
                "p50": [p["p50"] for p in points],
                "p90": [p["p90"] for p in points],
            },
            "histogram": {"x": edges, "y": counts},
            "cost": {
                "x": [p["x"] for p in points],
                "cost": [p["cost"] for p in points],
                "tokens": [p["tokens"] for p in points],
            },
        },
        "breakdowns": {
            "agent or chain": _merge(groups, 0),
            "agent model": [(_models(k), *rest) for k, *rest in by_models],
            "scorer version": _merge(groups, 1),
        },
    }


def _merge(
    groups: list[tuple[str | None, str | None, int, float | None, int, int]], index: int
) -> list[tuple[str | None, int, float | None, int]]:
    """``(key, count, mean, failures)`` per entity (``index`` 0) or version (1), most records first."""
    acc: dict[str | None, list[Any]] = {}
    for group in groups:
        key = group[0] if index == 0 else group[1]
        a = acc.setdefault(key, [0, 0.0, 0, 0])
        a[0] += group[2]
        a[1] += group[3] or 0.0
        a[2] += group[4]
        a[3] += group[5]
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
