"""``agentevals report``: summarise stored score records per scorer, per entity and per day, each
scorer's coverage of the stored runs, and the worst-scored runs.

Reads the store that ``SQLiteSink`` (a file) or ``PostgresSink`` (a ``postgresql://`` URL) writes,
through the store's report reads (``agentevals._store._report_reads``: the rollup the database keeps per
hour, plus the score rows of the partial hour ``since`` falls in), run at once in threads, and merges
their groups here. The runs the engine dropped and each scorer's pass threshold come from the store's
drops and scorers tables (see ``_catalog``); each labelled scorer's agreement with people and its
corrected pass rates from its labels (see ``agentevals._trust._agreement``).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from agentevals._evals._catalog import dropped_counts, stored_thresholds
from agentevals._evals._export import transcript_text
from agentevals._evals._pass_rates import PassRate, PassThresholds
from agentevals._model._thresholds import Threshold
from agentevals._store import _report_reads
from agentevals._store._hours import as_utc
from agentevals._store._reading import Reading, parallel
from agentevals._store._store import Store, open_store
from agentevals._trust._agreement import Agreement, labelled_agreements, worst_disagreements
from agentevals._trust._stats import MIN_LABELS_PER_CLASS

TABLE = "agentevals_scores"
_RELATIVE = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
#: Characters of a run's input the worst-runs list shows.
INPUT_CHARS = 120
#: Characters of each worst run's stored input read to find them (whole for all but huge inputs).
_INPUT_READ = 65_536


@dataclass(frozen=True)
class Group:
    """Aggregates of one group of records (``key`` names the group: scorer, entity/scorer, day/scorer)."""

    key: dict[str, str | None]
    count: int
    failures: int
    mean: float | None
    stdev: float | None
    min: float | None
    max: float | None
    cost_usd: float | None = None
    tokens: int = 0
    top_error: str | None = None

    @property
    def failure_rate(self) -> float:
        return self.failures / self.count if self.count else 0.0


@dataclass(frozen=True)
class Coverage:
    """One scorer's rows (by outcome; ``skip_reasons`` counts the skipped ones per reason) and the runs
    it has a row for (``runs``) out of the runs in the store (``store_runs``, same filters);
    ``dropped``: runs sampled for it that a ``ScoringEngine`` dropped (queue full, evicted, after
    shutdown), counted per whole hour from ``since`` (live scoring only)."""

    scorer_id: str
    rows: int
    scored: int
    failed: int
    skipped: int
    skip_reasons: dict[str, int]
    runs: int
    store_runs: int
    share: float | None  # runs / store_runs (None without stored runs)
    dropped: int = 0


@dataclass(frozen=True)
class WorstRun:
    """One of the lowest scores, with the start of its run's input (``None`` without a stored run)."""

    score: float
    scorer_id: str
    entity: str | None
    run_id: str
    created_at: str
    reason: str | None
    input: str | None


@dataclass(frozen=True)
class Report:
    """Everything ``agentevals report`` prints; ``as_dict()`` is its ``--json`` form."""

    db: str
    since: str | None
    source: str | None
    total: int
    failures: int
    by_scorer: list[Group]
    by_entity: list[Group]
    by_day: list[Group]
    coverage: list[Coverage] = field(default_factory=list)
    worst: list[WorstRun] = field(default_factory=list)
    runs: int = 0  # runs in the store (same filters)
    pass_rates: list[PassRate] = field(default_factory=list)
    #: Per scorer with labels, its agreement with people (absent from ``as_dict()`` when there is none).
    agreement: list[Agreement] = field(default_factory=list)
    #: Records of canary epochs left out: they judge labelled runs again (0 when a source was asked for).
    canary_left_out: int = 0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if not self.agreement:
            del data["agreement"]
        return data


def parse_since(value: str, *, now: datetime | None = None) -> datetime:
    """``"7d"``/``"24h"``/``"30m"``/``"2w"`` before now, or an ISO date/datetime (naive means UTC).

    >>> parse_since("2026-01-02").isoformat()
    '2026-01-02T00:00:00+00:00'
    """
    match = _RELATIVE.match(value)
    if match:
        amount, unit = int(match.group(1)), _UNITS[match.group(2)]
        return (now or datetime.now(UTC)) - timedelta(**{unit: amount})
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(
            f"--since {value!r} is neither a duration like 7d, 24h, 30m, 2w nor an ISO date like 2026-01-31"
        ) from None
    return as_utc(moment)


def build_report(
    db: str | Path,
    *,
    since: datetime | None = None,
    source: str | None = None,
    table: str = TABLE,
    worst: int = 10,
    covered: bool = True,
    thresholds: PassThresholds | None = None,
    min_labels: int = MIN_LABELS_PER_CLASS,
) -> Report:
    """Query the store at ``db`` (a SQLite file, a ``postgresql://`` URL or a ``.jsonl`` file written by
    ``JsonlSink``) whose scores table is
    ``table``; ``since``/``source`` filter the records, ``worst`` is how many lowest scores to list;
    ``covered=False`` skips counting each scorer's runs (its coverage's ``runs`` and ``share`` are
    then 0) for a caller that loads them apart. ``thresholds`` (``--pass-threshold``) asks for pass
    rates: per scorer, against the threshold given there, else the one stored for it (none: no rate).
    A scorer with labels gets its agreement with people, its pass rates corrected once each class has
    ``min_labels`` labels (the threshold: ``thresholds``', else the stored one, else 0.5).

    Raises ``ValueError`` when there is no store there (no file, not SQLite, no such table, no server).
    """
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", table):
        raise ValueError(f"invalid table name {table!r}")
    if worst < 0:
        raise ValueError(f"--worst must be 0 or more, got {worst}")
    if isinstance(min_labels, bool) or not isinstance(min_labels, int) or min_labels < 1:
        raise ValueError(f"--min-labels must be 1 or more, got {min_labels!r}")
    with open_store(str(db), table=table, read_only=True) as store:
        report = _Query(store, since, source).report(worst, covered, thresholds)
        scorers = [g.key["scorer_id"] or "" for g in report.by_scorer]
        found = labelled_agreements(
            store.reading,
            scorers,
            lambda scorer: None if thresholds is None else thresholds.of(scorer),
            min_per_class=min_labels,
            since=since,
            source=source,
        )
    return replace(report, agreement=[worst_disagreements(a) for a in found]) if found else report


class _Acc:
    """Mergeable aggregates of one group (count, sums, extremes), turned into a :class:`Group`."""

    __slots__ = ("cost", "count", "errors", "failures", "high", "low", "n", "squares", "tokens", "total")

    def __init__(self) -> None:
        self.count = self.failures = self.n = self.tokens = 0
        self.total = self.squares = 0.0
        self.low: float | None = None
        self.high: float | None = None
        self.cost: float | None = None
        self.errors: Counter[str] = Counter()

    def add(self, row: tuple[Any, ...]) -> None:
        outcome, error_type, count, n, total, squares, low, high, cost, tokens = row
        self.count += count
        if outcome == "failed":
            self.failures += count
            self.errors[error_type or "error"] += count
        if n:
            self.n += n
            self.total += total
            self.squares += squares
            self.low = low if self.low is None else min(self.low, low)
            self.high = high if self.high is None else max(self.high, high)
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost
        self.tokens += int(tokens or 0)

    def group(self, key: dict[str, str | None]) -> Group:
        mean = self.total / self.n if self.n else None
        top = max(self.errors.items(), key=lambda kv: (kv[1], kv[0]), default=None)
        return Group(
            key=key,
            count=self.count,
            failures=self.failures,
            mean=mean,
            stdev=_stdev(mean, self.squares / self.n if self.n else None, self.n),
            min=self.low,
            max=self.high,
            cost_usd=self.cost,
            tokens=self.tokens,
            top_error=None if top is None else f"{top[0]} ×{top[1]}",
        )


class _Query:
    """One report's reads of an open store (records created at or after ``since``, of ``source``)."""

    def __init__(self, store: Store, since: datetime | None, source: str | None) -> None:
        self.store, self.since, self.source = store, since, source

    def report(self, worst: int, count_runs: bool = True, thresholds: PassThresholds | None = None) -> Report:
        scorer: dict[tuple[Any, ...], _Acc] = defaultdict(_Acc)
        entity: dict[tuple[Any, ...], _Acc] = defaultdict(_Acc)
        day: dict[tuple[Any, ...], _Acc] = defaultdict(_Acc)
        outcomes: dict[str, Counter[str]] = defaultdict(Counter)
        skips: dict[str, Counter[str]] = defaultdict(Counter)
        since, source = self.since, self.source
        rolled, partial_hour, covered, store_runs, worst_rows, canary_left_out = self._parallel(
            [
                partial(_report_reads.rolled_groups, since=since, source=source),
                partial(_report_reads.partial_hour_groups, since=since, source=source),
                partial(_report_reads.covered_runs, since=since, source=source)
                if count_runs
                else lambda q: {},
                partial(_report_reads.stored_runs, since=since, source=source),
                partial(
                    _report_reads.lowest_scores,
                    since=since,
                    source=source,
                    limit=worst,
                    input_chars=_INPUT_READ,
                ),
                partial(_report_reads.rejudged_records, since=since) if source is None else lambda q: 0,
            ]
        )
        scans = (rolled, partial_hour)
        for row in (row for scan in scans for row in scan):
            d, e, s, skip_reason = row[:4]
            for groups, key in ((scorer, (s,)), (entity, (e, s)), (day, (d, s))):
                groups[key].add(row[4:])
            outcomes[s][row[4]] += row[6]
            if row[4] == "skipped":
                skips[s][skip_reason or "-"] += row[6]
        dropped = self._dropped()
        for scorer_id in dropped:
            outcomes.setdefault(scorer_id, Counter())
        return Report(
            db=self.store.display,
            since=None if self.since is None else self.since.isoformat(),
            source=self.source,
            total=sum(a.count for a in scorer.values()),
            failures=sum(a.failures for a in scorer.values()),
            by_scorer=_groups(scorer, ("scorer_id",)),
            by_entity=_groups(entity, ("entity", "scorer_id")),
            by_day=_groups(day, ("day", "scorer_id")),
            coverage=_coverage(outcomes, skips, covered, store_runs, dropped),
            worst=[_worst_run(row) for row in worst_rows],
            runs=store_runs,
            canary_left_out=canary_left_out,
            pass_rates=[]
            if thresholds is None
            else self._pass_rates([k[0] for k in scorer if k[0]], thresholds),
        )

    def _parallel(self, jobs: Sequence[Callable[[Reading], Any]]) -> list[Any]:
        """The reads ``jobs`` at once, each on a connection of its own."""
        return parallel(jobs, self.store.session, threads=os.cpu_count() or 1)

    def _dropped(self) -> dict[str, int]:
        """Per scorer, the dropped runs it had sampled (none for other sources than live scoring)."""
        if self.source not in (None, "live"):
            return {}
        return dropped_counts(self.store, since=self.since)

    def _pass_rates(self, scorers: list[str], options: PassThresholds) -> list[PassRate]:
        """Per scorer with a threshold (``--pass-threshold``, else the stored one), its scores and those
        that met it (one indexed count per scorer, in threads)."""
        stored = stored_thresholds(self.store)
        chosen: dict[str, tuple[Threshold, str]] = {}
        for scorer_id in sorted(scorers):
            option = options.of(scorer_id)
            if option is not None:
                chosen[scorer_id] = (option, "option")
            elif scorer_id in stored:
                chosen[scorer_id] = (stored[scorer_id], "stored")
        counts = self._parallel(
            [
                partial(
                    _report_reads.pass_counts,
                    scorer_id=s,
                    threshold=t,
                    since=self.since,
                    source=self.source,
                )
                for s, (t, _) in chosen.items()
            ]
        )
        return [
            PassRate(scorer_id, str(threshold), origin, n, errored, passed, _rate(passed, n + errored))
            for (scorer_id, (threshold, origin)), (n, errored, passed) in zip(
                chosen.items(), counts, strict=True
            )
        ]


def _worst_run(row: tuple[Any, ...]) -> WorstRun:
    score, scorer_id, entity, run_id, created, reason, stored = row
    return WorstRun(
        score=score,
        scorer_id=scorer_id,
        entity=entity,
        run_id=run_id,
        created_at=created if isinstance(created, str) else created.astimezone(UTC).isoformat(),
        reason=reason,
        input=_input_start(stored),
    )


def _coverage(
    outcomes: dict[str, Counter[str]],
    skips: dict[str, Counter[str]],
    covered: dict[str, int],
    store_runs: int,
    dropped: Mapping[str, int],
) -> list[Coverage]:
    out = []
    for scorer_id in sorted(outcomes, key=lambda s: s or ""):
        counts, runs = outcomes[scorer_id], covered.get(scorer_id, 0)
        out.append(
            Coverage(
                scorer_id=scorer_id,
                rows=sum(counts.values()),
                scored=counts["scored"],
                failed=counts["failed"],
                skipped=counts["skipped"],
                skip_reasons=dict(skips[scorer_id].most_common()),
                runs=runs,
                store_runs=store_runs,
                share=runs / store_runs if store_runs else None,
                dropped=dropped.get(scorer_id, 0),
            )
        )
    return out


def _groups(groups: dict[tuple[Any, ...], _Acc], names: tuple[str, ...]) -> list[Group]:
    ordered = sorted(groups.items(), key=lambda kv: tuple(k or "" for k in kv[0]))
    return [acc.group(dict(zip(names, key, strict=True))) for key, acc in ordered]


def _input_start(stored: str | None) -> str | None:
    """The start of a run's stored input (JSON text, cut after ``_INPUT_READ`` characters) as one line
    of text: an agent input's user messages, a string's text, else the JSON as stored."""
    if stored is None:
        return None
    try:
        text = transcript_text(json.loads(stored)) or ""
    except ValueError:  # cut inside the JSON: show it as stored
        text = stored
    text = " ".join(text.split())
    return text if len(text) <= INPUT_CHARS else text[: INPUT_CHARS - 1] + "…"


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _stdev(mean: float | None, mean_sq: float | None, n: int) -> float | None:
    """Sample standard deviation from the mean and the mean of squares (SQLite has no STDEV)."""
    if mean is None or mean_sq is None or n < 2:
        return None
    variance = max(mean_sq - mean * mean, 0.0) * n / (n - 1)
    return math.sqrt(variance)
