"""``agentevals report``: summarise stored score records per scorer, per entity and per day.

Reads the ``agentevals_scores`` table that ``SQLiteSink`` writes (live scoring and ``run_evals``); a
version-1 store is migrated to version 2 first.
"""

from __future__ import annotations

import math
import re
import sqlite3
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

TABLE = "agentevals_scores"
_RELATIVE = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


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
    db: str | Path, *, since: datetime | None = None, source: str | None = None, table: str = TABLE
) -> Report:
    """Query ``table`` in the SQLite file ``db``; ``since``/``source`` filter the records.

    Raises ``ValueError`` when the file or the table does not exist.
    """
    path = Path(db)
    if not path.is_file():
        raise ValueError(f"no database at {str(path)!r}; pass the file your SQLiteSink writes (--db PATH)")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", table):
        raise ValueError(f"invalid table name {table!r}")
    _migrate(path, table)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)
        ).fetchone()
        if not exists:
            raise ValueError(f"{str(path)!r} has no {table!r} table; is it a database written by SQLiteSink?")
        where, params = _filters(since, source)
        query = _Query(conn, table, where, params)
        total, failures = conn.execute(
            f"SELECT COUNT(*), COALESCE(SUM(outcome = 'failed'), 0) FROM {table}{where}", params
        ).fetchone()
        return Report(
            db=str(path),
            since=None if since is None else since.isoformat(),
            source=source,
            total=int(total),
            failures=int(failures),
            by_scorer=query.groups({"scorer_id": "scorer_id"}),
            by_entity=query.groups({"entity": "entity", "scorer_id": "scorer_id"}),
            by_day=query.groups({"day": "substr(created_at, 1, 10)", "scorer_id": "scorer_id"}),
        )
    finally:
        conn.close()


def _migrate(path: Path, table: str) -> None:
    """Bring a store written by an earlier version to the current schema (a no-op when it is)."""
    from agentevals.sinks._errors import SinkConfigError
    from agentevals.sinks._row import SCHEMA_VERSION, tables
    from agentevals.sinks._sqlite_schema import ensure_schema, stored_version

    conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
    try:
        known = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if table not in known or stored_version(conn, tables(table)) == SCHEMA_VERSION:
            return
        ensure_schema(conn, table, f"{str(path)!r}")
    except SinkConfigError as err:
        raise ValueError(str(err)) from err
    finally:
        conn.close()


def _filters(since: datetime | None, source: str | None) -> tuple[str, list[Any]]:
    clauses, params = [], []
    if since is not None:
        # created_at is ISO-8601 UTC text, so text order is time order.
        clauses.append("created_at >= ?")
        params.append(since.astimezone(UTC).isoformat())
    if source is not None:
        clauses.append("source = ?")
        params.append(source)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


class _Query:
    def __init__(self, conn: sqlite3.Connection, table: str, where: str, params: list[Any]) -> None:
        self.conn, self.table, self.where, self.params = conn, table, where, params

    def groups(self, keys: dict[str, str]) -> list[Group]:
        exprs = ", ".join(f"{expr} AS {name}" for name, expr in keys.items())
        names = ", ".join(keys)
        sql = (
            # Skipped rows (no score, no error) are neither scores nor failures.
            f"SELECT {exprs}, COUNT(*), COALESCE(SUM(outcome = 'failed'), 0), COUNT(score), AVG(score), "
            f"AVG(score * score), "
            f"MIN(score), MAX(score), SUM(cost_usd), COALESCE(SUM(prompt_tokens), 0) "
            f"+ COALESCE(SUM(completion_tokens), 0) FROM {self.table}{self.where} "
            f"GROUP BY {names} ORDER BY {names}"
        )
        errors = self._top_errors(keys)
        out = []
        for row in self.conn.execute(sql, self.params):
            key = {name: row[i] for i, name in enumerate(keys)}
            count, failures, scores, mean, mean_sq, low, high, cost, tokens = row[len(keys) :]
            out.append(
                Group(
                    key=key,
                    count=count,
                    failures=failures,
                    mean=mean,
                    stdev=_stdev(mean, mean_sq, scores),
                    min=low,
                    max=high,
                    cost_usd=cost,
                    tokens=int(tokens or 0),
                    top_error=errors.get(tuple(key.values())),
                )
            )
        return out

    def _top_errors(self, keys: dict[str, str]) -> dict[tuple[Any, ...], str]:
        exprs = ", ".join(keys.values())
        failed = "outcome = 'failed'"
        where = f"{self.where} AND {failed}" if self.where else f" WHERE {failed}"
        sql = (
            f"SELECT {exprs}, COALESCE(error_type, 'error'), COUNT(*) AS n FROM {self.table}{where} "
            f"GROUP BY {exprs}, error_type ORDER BY n DESC"
        )
        top: dict[tuple[Any, ...], str] = {}
        for row in self.conn.execute(sql, self.params):
            top.setdefault(tuple(row[: len(keys)]), f"{row[len(keys)]} ×{row[len(keys) + 1]}")
        return top


def _stdev(mean: float | None, mean_sq: float | None, n: int) -> float | None:
    """Sample standard deviation from the mean and the mean of squares (SQLite has no STDEV)."""
    if mean is None or mean_sq is None or n < 2:
        return None
    variance = max(mean_sq - mean * mean, 0.0) * n / (n - 1)
    return math.sqrt(variance)
