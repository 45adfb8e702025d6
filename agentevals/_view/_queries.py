"""The SQL behind ``agentevals view``: read-only, parameterised queries over a store (SQLite
file or PostgreSQL URL), written once with ``?`` placeholders; :class:`_Dialect` holds the few
expressions that differ. The overview and scorer pages read the rollup and the score histogram
(:mod:`agentevals._view._rolled`); where those cannot answer (an eval id filtered, scores outside 0..1,
a threshold between bins), the queries here group the scores into bins (``ROUND(score, 3)``) so that
percentiles and histograms come from a few thousand grouped rows.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

from agentevals._store._row import TABLE, Tables, tables, utc_text
from agentevals._store._store import Store, display_address, open_store

Bucket = Literal["hour", "day", "week"]
BUCKETS: tuple[Bucket, ...] = ("hour", "day", "week")
#: Rows per page of the runs list.
PAGE_SIZE = 50

T = TypeVar("T")


@dataclass(frozen=True)
class _Dialect:
    mark: str
    bin: str
    buckets: dict[str, str]  # the time bucket of a score row's created_at, as a label
    rolled: dict[str, str]  # the same label from the rollup/histogram's hour ``bucket`` (YYYY-MM-DDTHH)

    def sql(self, text: str) -> str:
        return text if self.mark == "?" else text.replace("%", "%%").replace("?", self.mark)


_SQLITE = _Dialect(
    "?",
    "ROUND(score, 3)",
    {
        "hour": "substr(created_at, 1, 13) || ':00'",
        "day": "substr(created_at, 1, 10)",
        "week": "date(substr(created_at, 1, 10), 'weekday 0', '-6 days')",
    },
    {
        "hour": "bucket || ':00'",
        "day": "substr(bucket, 1, 10)",
        "week": "date(substr(bucket, 1, 10), 'weekday 0', '-6 days')",
    },
)
_POSTGRES = _Dialect(
    "%s",
    "ROUND(score::numeric, 3)::float8",
    {
        "hour": "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24\":00\"')",
        "day": "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
        "week": "to_char(date_trunc('week', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')",
    },
    {
        "hour": "bucket || ':00'",
        "day": "substr(bucket, 1, 10)",
        "week": "to_char(substr(bucket, 1, 10)::date "
        "- (EXTRACT(ISODOW FROM substr(bucket, 1, 10)::date)::int - 1), 'YYYY-MM-DD')",
    },
)


@dataclass(frozen=True)
class Filters:
    """What the pages narrow the scores to: a time range (aware datetimes) and an agent/chain."""

    since: datetime | None = None
    until: datetime | None = None
    entity: str | None = None
    eval_id: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class Binned:
    """One scorer's rows in one time bucket with one outcome, error type and score (to 0.001)."""

    bucket: str
    outcome: str
    error_type: str | None
    value: float | None  # the score, rounded to 0.001 (None: no score)
    rows: int
    passed: int  # scores within the threshold's bounds (exact)
    cost: float | None
    tokens: int
    total: float  # sum of the scores (exact)


class Reader:
    """A store opened for the viewer through :func:`open_store` (checked, a ``.jsonl`` file loaded into a
    temporary SQLite copy) and kept open until :meth:`close`; each
    request reads it on short connections of its own (:meth:`session`)."""

    def __init__(self, address: str | os.PathLike[str], *, table: str = TABLE) -> None:
        self.store = open_store(address, table=table)
        self.kind = self.store.kind
        self.address = str(address)
        self.display = display_address(address)
        self.tables: Tables = tables(table)
        self.dialect = _SQLITE if self.kind == "sqlite" else _POSTGRES
        self._store_lock = threading.Lock()

    @property
    def database(self) -> str:
        """What to open again for another reader (``build_report``): the SQLite file read (a JSONL
        store's copy), else the address."""
        return self.address if self.store.database is None else str(self.store.database)

    def close(self) -> None:
        """Close the store, after any read on its connection (closing one under a read crashes
        SQLite: the app's start-up warm-up may still be reading when the server stops)."""
        with self._store_lock:
            self.store.close()

    def with_store(self, read: Callable[[Store], T]) -> T:
        """``read(store)`` on the store's own connection, one caller at a time (for the readers of
        :mod:`agentevals._evals._catalog`: the thresholds and drops the store keeps)."""
        with self._store_lock:
            return read(self.store)

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A read-only connection, closed on leaving the block."""
        conn = self.store.reader()
        if conn is None:  # PostgreSQL: one connection per session (a connection serves one thread)
            import psycopg

            conn = psycopg.connect(self.address, autocommit=True, connect_timeout=10)
        try:
            yield Session(self, conn)
        finally:
            conn.close()

    def parallel(self, jobs: Sequence[Callable[[Session], Any]]) -> list[Any]:
        """``[job(session) for job in jobs]``, run at once in threads, each on a connection of its own
        (sqlite3 and psycopg release the GIL while a query runs)."""

        def run(job: Callable[[Session], Any]) -> Any:
            with self.session() as q:
                return job(q)

        with ThreadPoolExecutor(max_workers=min(len(jobs), 8)) as pool:
            return list(pool.map(run, jobs))

    def fingerprint(self) -> tuple[Any, ...]:
        """Changes when rows are added to the store (caches of computed pages key on it): the newest
        row of each table (SQLite: its rowid; PostgreSQL: the row count and newest timestamp)."""
        with self.session() as q:
            if self.kind == "sqlite":
                sql = "SELECT MAX(rowid), NULL FROM {}"
            else:
                sql = "SELECT COUNT(*), MAX(created_at) FROM {}"
            return (*q.rows(sql.format(self.tables.scores))[0], *q.rows(sql.format(self.tables.runs))[0])


class Session:
    """One connection to the store: the queries of the pages."""

    def __init__(self, reader: Reader, conn: Any) -> None:
        self.reader, self.conn = reader, conn
        self.d = reader.dialect
        self.scores, self.runs = reader.tables.scores, reader.tables.runs

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cursor = self.conn.cursor()
        try:
            cursor.execute(self.d.sql(sql), list(params))
            return list(cursor.fetchall())
        finally:
            cursor.close()

    def moment(self, value: datetime) -> Any:
        """A timestamp parameter: ISO text for SQLite (text order is time order), else a datetime."""
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return utc_text(aware) if self.reader.kind == "sqlite" else aware

    def where(self, f: Filters, alias: str = "", extra: Sequence[str] = ()) -> tuple[str, list[Any]]:
        clauses, params = list(extra), []
        if f.since is not None:
            clauses.append(f"{alias}created_at >= ?")
            params.append(self.moment(f.since))
        if f.until is not None:
            clauses.append(f"{alias}created_at < ?")
            params.append(self.moment(f.until))
        if f.entity is not None:
            clauses.append(f"{alias}entity = ?")
            params.append(f.entity)
        for column, value in (("eval_id", f.eval_id), ("source", f.source)):
            if value is not None:
                clauses.append(f"{alias}{column} = ?")
                params.append(value)
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), params

    # -- choices for the filter forms ----------------------------------------------------------------

    def choices(self, limit: int = 200) -> dict[str, Any]:
        """The filter forms' choices: the store's entities, scorers and eval ids (at most ``limit`` of
        each, sorted) and the first and last ``created_at`` of its scores. Entities and scorers come
        from the rollup (a few thousand rows, not every score; its ``''``, a ``NULL``, no filter can
        choose), eval ids through their index, the time range from two lookups per scorer in the
        (scorer, created_at) index (a scan beyond 100 scorers)."""
        pairs = self.rows(f"SELECT entity, scorer_id FROM {self.reader.tables.rollup} GROUP BY 1, 2")
        names = sorted({str(s) for _, s in pairs})
        evals = self.rows(
            f"SELECT eval_id FROM {self.scores} WHERE eval_id IS NOT NULL GROUP BY eval_id "
            f"ORDER BY 1 LIMIT {int(limit)}"
        )
        return {
            "entities": sorted({str(e) for e, _ in pairs if e})[:limit],
            "scorers": [name for name in names if name][:limit],
            "evals": [str(row[0]) for row in evals],
            "range": self._time_range(names),
        }

    def latest_evals(self, limit: int = 2) -> list[str]:
        """The ids of the most recent evaluations, newest first."""
        rows = self.rows(
            f"SELECT eval_id FROM {self.scores} WHERE eval_id IS NOT NULL GROUP BY eval_id "
            f"ORDER BY MAX(created_at) DESC LIMIT {int(limit)}"
        )
        return [str(row[0]) for row in rows]

    def _time_range(self, names: list[str]) -> tuple[str | None, str | None]:
        if len(names) > 100:
            low, high = self.rows(f"SELECT MIN(created_at), MAX(created_at) FROM {self.scores}")[0]
            return _text(low), _text(high)
        ends = [
            f"SELECT (SELECT MIN(created_at) FROM {self.scores} WHERE scorer_id = ?) AS low, "
            f"(SELECT MAX(created_at) FROM {self.scores} WHERE scorer_id = ?) AS high"
            for _ in names
        ]
        ends.append(  # the rollup's '' is also a NULL scorer id
            f"SELECT MIN(created_at) AS low, MAX(created_at) AS high FROM {self.scores} "
            "WHERE scorer_id IS NULL"
        )
        low, high = self.rows(
            f"SELECT MIN(low), MAX(high) FROM ({' UNION ALL '.join(ends)}) ends",
            [name for name in names for _ in range(2)],
        )[0]
        return _text(low), _text(high)

    # -- coverage --------------------------------------------------------------------------------------

    def scorers_since(self, since: datetime | None) -> list[str]:
        """The scorers the rollup has rows of from the hour of ``since`` on (or any), sorted."""
        where, params = "", []
        if since is not None:
            where, params = " WHERE bucket >= ?", [since.astimezone(UTC).strftime("%Y-%m-%dT%H")]
        rows = self.rows(
            f"SELECT DISTINCT scorer_id FROM {self.reader.tables.rollup}{where} ORDER BY 1", params
        )
        return [str(row[0]) for row in rows]

    def covered_runs(
        self, scorer: str, since: datetime | None, eval_id: str | None = None
    ) -> tuple[int, int]:
        """``(rows, distinct runs)`` of one scorer from ``since`` on, of one evaluation when ``eval_id``
        is given (through its (scorer, created_at) index)."""
        where, params = self.where(Filters(since=since, eval_id=eval_id), extra=["scorer_id = ?"])
        rows, runs = self.rows(
            f"SELECT COUNT(*), COUNT(DISTINCT run_id) FROM {self.scores}{where}", [scorer, *params]
        )[0]
        return int(rows), int(runs)

    def stored_runs(self, since: datetime | None, eval_id: str | None = None) -> int:
        """How many runs are stored from ``since`` on, of one evaluation when ``eval_id`` is given."""
        where, params = self.where(Filters(since=since, eval_id=eval_id))
        return int(self.rows(f"SELECT COUNT(*) FROM {self.runs}{where}", params)[0][0])

    # -- distributions -------------------------------------------------------------------------------

    def bins(
        self, f: Filters, bounds: dict[str, tuple[float, float]], default: tuple[float, float]
    ) -> list[tuple[str, str, str | None, float | None, int, int]]:
        """``(scorer_id, outcome, error_type, bin, count, passed)``: scores per scorer and outcome,
        binned; ``passed`` counts the scores within the scorer's ``(low, high)`` bounds (``default``
        for a scorer not in ``bounds``; exact, not binned)."""
        cases = " ".join("WHEN ? THEN ?" for _ in bounds)
        low, high = (f"CASE scorer_id {cases} ELSE ? END" if bounds else "?" for _ in range(2))
        case_params: list[Any] = [
            v
            for side in (0, 1)
            for v in (*(x for name, pair in bounds.items() for x in (name, pair[side])), default[side])
        ]
        where, params = self.where(f)
        rows = self.rows(
            f"SELECT scorer_id, outcome, error_type, {self.d.bin}, COUNT(*), "
            f"SUM(CASE WHEN score >= {low} AND score <= {high} THEN 1 ELSE 0 END) "
            f"FROM {self.scores}{where} GROUP BY scorer_id, outcome, error_type, {self.d.bin}",
            [*case_params, *params],
        )
        return [(s, o, e, None if b is None else float(b), int(n), int(p or 0)) for s, o, e, b, n, p in rows]

    def passes(self, scorer: str, f: Filters, bounds: tuple[float, float]) -> int:
        """How many of one scorer's scores lie within ``(low, high)`` (through its (scorer, created_at)
        index): the overview's pass count where the histogram's bins cannot tell it."""
        where, params = self.where(f, extra=["scorer_id = ?", "score >= ?", "score <= ?"])
        return int(self.rows(f"SELECT COUNT(*) FROM {self.scores}{where}", [scorer, *bounds, *params])[0][0])

    def series(self, scorer: str, f: Filters, bucket: Bucket, bounds: tuple[float, float]) -> list[Binned]:
        """One scorer's rows over time, binned (``ROUND(score, 3)``): the row path of the scorer page,
        for what the rollup cannot filter (an eval id) or bin (scores outside 0..1, a threshold that is
        not a whole bin or has a maximum); ``passed`` counts the scores within ``(low, high)``."""
        key = self.d.buckets[bucket]
        where, params = self.where(f, extra=["scorer_id = ?"])
        groups = f"{key}, outcome, error_type, {self.d.bin}"
        rows = self.rows(
            f"SELECT {groups}, COUNT(*), SUM(CASE WHEN score >= ? AND score <= ? THEN 1 ELSE 0 END), "
            "SUM(cost_usd), COALESCE(SUM(prompt_tokens), 0) + COALESCE(SUM(completion_tokens), 0), "
            f"COALESCE(SUM(score), 0) FROM {self.scores}{where} GROUP BY {groups}",
            [*bounds, scorer, *params],
        )
        return [
            Binned(str(k), o, e, _float(b), int(n), int(p or 0), _float(c), int(t or 0), float(s))
            for k, o, e, b, n, p, c, t, s in rows
        ]

    def by_entity(self, scorer: str, f: Filters) -> list[tuple[str | None, int, float, int, int]]:
        """``(entity, rows, sum of scores, scores, failures)`` of one scorer's rows."""
        where, params = self.where(f, extra=["scorer_id = ?"])
        rows = self.rows(
            "SELECT entity, COUNT(*), COALESCE(SUM(score), 0), COUNT(score), "
            f"SUM(CASE WHEN outcome = 'failed' THEN 1 ELSE 0 END) FROM {self.scores}{where} GROUP BY entity",
            [scorer, *params],
        )
        return [(e, int(n), float(t), int(k), int(x or 0)) for e, n, t, k, x in rows]

    def by_version_and_models(
        self, scorer: str, f: Filters
    ) -> list[tuple[str | None, str | None, int, float, int, int]]:
        """``(scorer version, agent models, rows, sum of scores, scores, failures)`` of one scorer: one
        grouped scan of its rows, each with its run's models (what the rollup does not keep)."""
        where, params = self.where(f, alias="s.", extra=["s.scorer_id = ?"])
        rows = self.rows(
            "SELECT s.scorer_version, r.models, COUNT(*), COALESCE(SUM(s.score), 0), COUNT(s.score), "
            "SUM(CASE WHEN s.outcome = 'failed' THEN 1 ELSE 0 END) "
            f"FROM {self.scores} s LEFT JOIN {self.runs} r ON r.run_id = s.run_id{where} GROUP BY 1, 2",
            [scorer, *params],
        )
        return [(v, _key(m), int(n), float(t), int(k), int(x or 0)) for v, m, n, t, k, x in rows]

    # -- runs ------------------------------------------------------------------------------------------

    def score_rows(
        self,
        f: Filters,
        *,
        scorer: str | None = None,
        outcome: str | None = None,
        low: float | None = None,
        high: float | None = None,
        page: int = 0,
    ) -> list[dict[str, Any]]:
        """One page of score rows, worst first (lowest score; failed and skipped rows after the scored)."""
        extra, extra_params = [], []
        for clause, value in (
            ("s.scorer_id = ?", scorer),
            ("s.outcome = ?", outcome),
            ("s.score >= ?", low),
            ("s.score <= ?", high),
        ):
            if value is not None:
                extra.append(clause)
                extra_params.append(value)
        where, params = self.where(f, alias="s.", extra=extra)
        order = "ORDER BY CASE WHEN s.score IS NULL THEN 1 ELSE 0 END, s.score, s.created_at DESC, s.id"
        # The page's rows first, then their runs' inputs (not a join of every matching row).
        rows = self.rows(
            "SELECT s.id, s.created_at, s.run_id, s.scorer_id, s.outcome, s.score, s.reason, s.entity, "
            "s.error_type, s.skip_reason, r.input FROM ("
            "SELECT s.id, s.created_at, s.run_id, s.scorer_id, s.outcome, s.score, s.reason, s.entity, "
            f"s.error_type, s.skip_reason FROM {self.scores} s{where} {order} "
            f"LIMIT {PAGE_SIZE + 1} OFFSET {max(page, 0) * PAGE_SIZE}"
            f") s LEFT JOIN {self.runs} r ON r.run_id = s.run_id {order}",
            [*extra_params, *params],
        )
        names = ("id", "created_at", "run_id", "scorer_id", "outcome", "score", "reason", "entity")
        out = []
        for row in rows:
            item = dict(zip(names, row[:8], strict=True))
            item["created_at"] = _text(item["created_at"])
            item["error_type"], item["skip_reason"], item["input"] = row[8], row[9], row[10]
            out.append(item)
        return out

    def run(self, run_id: str) -> dict[str, Any] | None:
        from agentevals._store._row import RUN_COLUMNS

        rows = self.rows(f"SELECT {', '.join(RUN_COLUMNS)} FROM {self.runs} WHERE run_id = ?", [run_id])
        return dict(zip(RUN_COLUMNS, rows[0], strict=True)) if rows else None

    def run_scores(self, run_id: str) -> list[dict[str, Any]]:
        """Every score record of a run, with each of ``COLUMNS``."""
        from agentevals._store._row import COLUMNS

        rows = self.rows(
            f"SELECT {', '.join(COLUMNS)} FROM {self.scores} WHERE run_id = ? ORDER BY scorer_id, created_at",
            [run_id],
        )
        return [dict(zip(COLUMNS, row, strict=True)) for row in rows]

    # -- compare ---------------------------------------------------------------------------------------

    def moments(self, f: Filters) -> list[tuple[str, int, float | None, float | None]]:
        """``(scorer_id, n, sum, sum of squares)`` of the scores under ``f``."""
        where, params = self.where(f, extra=["score IS NOT NULL"])
        rows = self.rows(
            f"SELECT scorer_id, COUNT(*), SUM(score), SUM(score * score) FROM {self.scores}{where} "
            "GROUP BY scorer_id ORDER BY scorer_id",
            params,
        )
        return [(s, int(n), _float(t), _float(q)) for s, n, t, q in rows]

    def item_means(self, f: Filters) -> dict[tuple[str, str], tuple[float, str]]:
        """Mean score per (scorer, item), an item being a run's input (its JSON text), with a run id."""
        where, params = self.where(f, alias="s.", extra=["s.score IS NOT NULL"])
        text = "r.input" if self.reader.kind == "sqlite" else "r.input::text"
        rows = self.rows(
            f"SELECT s.scorer_id, {text}, AVG(s.score), MIN(s.run_id) "
            f"FROM {self.scores} s JOIN {self.runs} r ON r.run_id = s.run_id{where} "
            f"GROUP BY s.scorer_id, {text} LIMIT 20000",
            params,
        )
        return {(s, str(i)): (float(m), str(r)) for s, i, m, r in rows if i is not None}


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat() if isinstance(value, datetime) else str(value)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _key(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else json.dumps(value)
