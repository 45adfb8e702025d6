"""``agentevals report``: summarise stored score records per scorer, per entity and per day, each
scorer's coverage of the stored runs, and the worst-scored runs.

Reads the store that ``SQLiteSink`` (a file) or ``PostgresSink`` (a ``postgresql://`` URL) writes. The
SQL is written once (``?`` placeholders); the dialects differ only in :class:`_Dialect`'s few
expressions. Every per-group table comes from the rollup
the database keeps (per hour, see ``agentevals._store._rollup``), plus, when ``since`` falls inside an
hour, the score rows of the rest of that hour; coverage adds one ``COUNT(DISTINCT run_id)``, the worst
list one top-N query. The runs the engine dropped and each scorer's pass threshold come from the
store's drops and scorers tables (see ``_catalog``); pass rates count the score rows
of each scorer that has a threshold, through the (scorer, created_at) index.
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from agentevals._evals._catalog import dropped_counts, stored_thresholds
from agentevals._evals._export import transcript_text
from agentevals._evals._pass_rates import PassRate, PassThresholds, bounds_sql
from agentevals._model._thresholds import Threshold
from agentevals._store._store import Store, open_store

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

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


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
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def build_report(
    db: str | Path,
    *,
    since: datetime | None = None,
    source: str | None = None,
    table: str = TABLE,
    worst: int = 10,
    covered: bool = True,
    thresholds: PassThresholds | None = None,
) -> Report:
    """Query the store at ``db`` (a SQLite file, a ``postgresql://`` URL or a ``.jsonl`` file written by
    ``JsonlSink``) whose scores table is
    ``table``; ``since``/``source`` filter the records, ``worst`` is how many lowest scores to list;
    ``covered=False`` skips counting each scorer's runs (its coverage's ``runs`` and ``share`` are
    then 0) for a caller that loads them apart. ``thresholds`` (``--pass-threshold``) asks for pass
    rates: per scorer, against the threshold given there, else the one stored for it (none: no rate).

    Raises ``ValueError`` when there is no store there (no file, not SQLite, no such table, no server).
    """
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", table):
        raise ValueError(f"invalid table name {table!r}")
    if worst < 0:
        raise ValueError(f"--worst must be 0 or more, got {worst}")
    with _open(str(db), table) as store:
        return _Query(store, table, since, source).report(worst, covered, thresholds)


@dataclass(frozen=True)
class _Dialect:
    """What differs between SQLite and PostgreSQL in the report's SQL."""

    placeholder: str  # written as "?" in the SQL, replaced by this
    day: str  # the UTC day of created_at as YYYY-MM-DD
    input_start: str  # the first characters of the runs table's input (JSON), as text
    since_param: Any  # how a datetime parameter is passed

    def sql(self, text: str) -> str:
        return text if self.placeholder == "?" else text.replace("?", self.placeholder)


SQLITE = _Dialect("?", "substr(created_at, 1, 10)", "substr(r.input, 1, {n})", lambda d: d.isoformat())
POSTGRES = _Dialect(
    "%s",
    "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
    "left(r.input::text, {n})",
    lambda d: d,
)


@dataclass
class _Store:
    """An open store: run SQL written with ``?`` placeholders, get rows as tuples.

    ``connect`` (SQLite) opens another read-only connection: :meth:`parallel` then runs independent
    queries in threads (sqlite3 releases the GIL while a query runs), each on its own connection.
    """

    db: str
    dialect: _Dialect
    conn: Any
    connect: Callable[[], Any] | None = None
    opened: Store | None = None  # the store it reads (for the catalog's queries)

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        try:
            return list(self.conn.execute(self.dialect.sql(sql), params).fetchall())
        except sqlite3.DatabaseError as err:  # a damaged file: a usage error, not a traceback
            raise ValueError(f"{self.db!r} cannot be read as an agentevals store: {err}") from err

    def parallel(self, jobs: Sequence[Callable[[_Store], Any]]) -> list[Any]:
        """``[job(store) for job in jobs]``, in threads on connections of their own when it can."""
        if self.connect is None or len(jobs) < 2:
            return [job(self) for job in jobs]

        def run(job: Callable[[_Store], Any]) -> Any:
            assert self.connect is not None
            conn = self.connect()
            try:
                return job(replace(self, conn=conn))
            finally:
                conn.close()

        with ThreadPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 1)) as pool:
            return list(pool.map(run, jobs))


@contextmanager
def _open(db: str, table: str) -> Iterator[_Store]:
    """The store at ``db`` through :func:`open_store` (SQLite read-only, PostgreSQL, or a JSONL copy)."""
    with open_store(db, table=table, read_only=True) as store:
        if store.kind == "sqlite":
            yield _Store(store.display, SQLITE, store.connection, connect=store.reader, opened=store)
        else:
            yield _Store(store.display, POSTGRES, store.connection, opened=store)


def _filters(
    since: datetime | None, source: str | None, dialect: _Dialect, alias: str = ""
) -> tuple[list[str], list[Any]]:
    clauses, params = [], []
    if since is not None:
        # SQLite: created_at is ISO-8601 UTC text, so text order is time order.
        clauses.append(f"{alias}created_at >= ?")
        params.append(dialect.since_param(since.astimezone(UTC)))
    if source is not None:
        clauses.append(f"{alias}source = ?")
        params.append(source)
    return clauses, params


def _where(clauses: list[str]) -> str:
    return " WHERE " + " AND ".join(clauses) if clauses else ""


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
    def __init__(self, store: _Store, table: str, since: datetime | None, source: str | None) -> None:
        from agentevals._store._row import tables

        t = tables(table)
        self.store, self.table, self.runs, self.rollup = store, table, t.runs, t.rollup
        self.since, self.source = since, source
        self.clauses, self.params = _filters(since, source, store.dialect)

    def report(self, worst: int, count_runs: bool = True, thresholds: PassThresholds | None = None) -> Report:
        scorer: dict[tuple[Any, ...], _Acc] = defaultdict(_Acc)
        entity: dict[tuple[Any, ...], _Acc] = defaultdict(_Acc)
        day: dict[tuple[Any, ...], _Acc] = defaultdict(_Acc)
        outcomes: dict[str, Counter[str]] = defaultdict(Counter)
        skips: dict[str, Counter[str]] = defaultdict(Counter)
        rolled, partial_hour, covered, store_runs, worst_runs = self.store.parallel(
            [
                self._rolled,
                self._partial_hour,
                self._covered if count_runs else lambda store: {},
                self._store_runs,
                partial(self._worst, limit=worst),
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
            db=self.store.db,
            since=None if self.since is None else self.since.isoformat(),
            source=self.source,
            total=sum(a.count for a in scorer.values()),
            failures=sum(a.failures for a in scorer.values()),
            by_scorer=_groups(scorer, ("scorer_id",)),
            by_entity=_groups(entity, ("entity", "scorer_id")),
            by_day=_groups(day, ("day", "scorer_id")),
            coverage=_coverage(outcomes, skips, covered, store_runs, dropped),
            worst=worst_runs,
            runs=store_runs,
            pass_rates=[]
            if thresholds is None
            else self._pass_rates([k[0] for k in scorer if k[0]], thresholds),
        )

    def _dropped(self) -> dict[str, int]:
        """Per scorer, the dropped runs it had sampled (none for other sources than live scoring)."""
        if self.store.opened is None or self.source not in (None, "live"):
            return {}
        return dropped_counts(self.store.opened, since=self.since)

    def _pass_rates(self, scorers: list[str], options: PassThresholds) -> list[PassRate]:
        """Per scorer with a threshold (``--pass-threshold``, else the stored one), its scores and those
        that met it (one indexed count per scorer, in threads)."""
        stored = {} if self.store.opened is None else stored_thresholds(self.store.opened)
        chosen: dict[str, tuple[Threshold, str]] = {}
        for scorer_id in sorted(scorers):
            option = options.of(scorer_id)
            if option is not None:
                chosen[scorer_id] = (option, "option")
            elif scorer_id in stored:
                chosen[scorer_id] = (stored[scorer_id], "stored")
        counts = self.store.parallel(
            [partial(self._passed, scorer_id=s, threshold=t) for s, (t, _) in chosen.items()]
        )
        return [
            PassRate(scorer_id, str(threshold), origin, n, errored, passed, _rate(passed, n + errored))
            for (scorer_id, (threshold, origin)), (n, errored, passed) in zip(
                chosen.items(), counts, strict=True
            )
        ]

    def _passed(self, store: _Store, scorer_id: str, threshold: Threshold) -> tuple[int, int, int]:
        """``(scores, errored records, scores meeting threshold)`` of ``scorer_id`` under the report's
        filters (skipped records are neither)."""
        bounds, params = bounds_sql(threshold)
        clauses = ["scorer_id = ?", "outcome <> 'skipped'", *self.clauses]
        row = store.rows(
            "SELECT COUNT(score), COUNT(*) - COUNT(score), "
            f"SUM(CASE WHEN score IS NOT NULL AND {bounds} THEN 1 ELSE 0 END) "
            f"FROM {self.table}{_where(clauses)}",
            [*params, scorer_id, *self.params],
        )[0]
        return int(row[0]), int(row[1]), int(row[2] or 0)

    def _rolled(self, store: _Store) -> list[tuple[Any, ...]]:
        """The aggregates of the whole hours from ``since`` on, from the rollup, grouped by day, entity,
        scorer, skip reason, outcome and error type (a few thousand groups), merged in Python."""
        clauses, params = _filters(None, self.source, store.dialect)
        if self.since is not None:
            clauses.append("bucket >= ?")
            params.append(_bucket(_hour_after(self.since)))
        total = "CAST(SUM({}) AS BIGINT)"
        rows = store.rows(
            "SELECT substr(bucket, 1, 10), entity, scorer_id, skip_reason, outcome, error_type, "
            f"{total.format('rows')}, {total.format('scores')}, SUM(total), SUM(squares), MIN(low), "
            f"MAX(high), CASE WHEN SUM(priced) > 0 THEN SUM(cost) END, {total.format('tokens')} "
            f"FROM {self.rollup}{_where(clauses)} GROUP BY 1, 2, 3, 4, 5, 6",
            params,
        )
        # The rollup stores NULL key values as '' (see agentevals._store._rollup).
        return [(row[0], *(value or None for value in row[1:6]), *row[6:]) for row in rows]

    def _partial_hour(self, store: _Store) -> list[tuple[Any, ...]]:
        """The same aggregates from the score rows between ``since`` and the next whole hour (read
        through the (scorer, created_at) index for the scorers the rollup has in that hour)."""
        if self.since is None or _hour_after(self.since) == self.since:
            return []
        scorers = [
            row[0]
            for row in store.rows(
                f"SELECT DISTINCT scorer_id FROM {self.rollup} WHERE bucket = ?", [_bucket(self.since)]
            )
        ]
        if not scorers:
            return []
        keys = f"{store.dialect.day}, entity, scorer_id, skip_reason, outcome, error_type"
        clauses = [*self.clauses, "created_at < ?", f"scorer_id IN ({', '.join('?' * len(scorers))})"]
        return store.rows(
            f"SELECT {keys}, COUNT(*), COUNT(score), SUM(score), SUM(score * score), MIN(score), "
            "MAX(score), SUM(cost_usd), "
            "COALESCE(SUM(prompt_tokens), 0) + COALESCE(SUM(completion_tokens), 0) "
            f"FROM {self.table}{_where(clauses)} GROUP BY {keys}",
            [*self.params, store.dialect.since_param(_hour_after(self.since)), *scorers],
        )

    def _store_runs(self, store: _Store) -> int:
        return int(store.rows(f"SELECT COUNT(*) FROM {self.runs}{_where(self.clauses)}", self.params)[0][0])

    def _covered(self, store: _Store) -> dict[str, int]:
        """Per scorer, the runs it has a row for."""
        rows = store.rows(
            f"SELECT scorer_id, COUNT(DISTINCT run_id) FROM {self.table}{_where(self.clauses)} "
            "GROUP BY scorer_id",
            self.params,
        )
        return {scorer_id: int(n) for scorer_id, n in rows}

    def _worst(self, store: _Store, limit: int) -> list[WorstRun]:
        if not limit:
            return []
        clauses, params = _filters(self.since, self.source, store.dialect, alias="s.")
        start = store.dialect.input_start.format(n=_INPUT_READ)  # a few rows: enough to parse the JSON
        rows = store.rows(
            f"SELECT s.score, s.scorer_id, s.entity, s.run_id, s.created_at, s.reason, {start} "
            f"FROM {self.table} s LEFT JOIN {self.runs} r ON r.run_id = s.run_id"
            f"{_where(['s.score IS NOT NULL', *clauses])} "
            "ORDER BY s.score, s.created_at DESC LIMIT ?",
            [*params, limit],
        )
        return [
            WorstRun(
                score=score,
                scorer_id=scorer_id,
                entity=entity,
                run_id=run_id,
                created_at=created if isinstance(created, str) else created.astimezone(UTC).isoformat(),
                reason=reason,
                input=_input_start(stored),
            )
            for score, scorer_id, entity, run_id, created, reason, stored in rows
        ]


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


def _hour_after(moment: datetime) -> datetime:
    """The first whole UTC hour at or after ``moment``."""
    moment = moment.astimezone(UTC)
    start = moment.replace(minute=0, second=0, microsecond=0)
    return start if start == moment else start + timedelta(hours=1)


def _bucket(moment: datetime) -> str:
    """The rollup's bucket (UTC hour, ``YYYY-MM-DDTHH``) of ``moment``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H")


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
