"""The score histogram (beside the rollup): per hour, entity, scorer and source, how
many scores fell in each of 100 bins, kept by triggers like the rollup, so the viewer's mean,
percentiles and pass rate (to 0.01) come from a few thousand rows instead of every score.

``bin = floor(score * 100 + 1e-9)`` for a score in [0, 1] (the ``1e-9``: 0.29, stored as 0.28999..., is
in bin 29, as ``score >= 0.29`` says), 1.0 in the top bin (99); a score below 0 counts in bin 0 and one
above 1 in bin 99. Rows without a score are not counted. ``NULL`` keys are ``''``.
"""

from __future__ import annotations

from agentevals._store._dialect import POSTGRES, SQLITE, Dialect
from agentevals._store._rollup import row_triggers, statement_triggers
from agentevals._store._row import Tables

#: The histogram's key columns, in order (``bucket`` as the rollup's: the UTC hour of ``created_at``).
KEY = ("bucket", "entity", "scorer_id", "source", "bin")
#: Bins per unit of score.
BINS = 100
_NUDGE = 1e-9


def score_bin(score: float) -> int:
    """The bin of ``score`` (what the database computes).

    >>> score_bin(0.0), score_bin(0.29), score_bin(0.999), score_bin(1.0), score_bin(-3.0), score_bin(7.0)
    (0, 29, 99, 99, 0, 99)
    """
    return max(0, min(BINS - 1, int(score * BINS + _NUDGE)))


def bin_sql(d: Dialect, p: str = "") -> str:
    """The bin of ``{p}score`` in SQL (:func:`score_bin`).

    >>> bin_sql(SQLITE)
    'max(0, min(99, CAST(score * 100 + 1e-09 AS INTEGER)))'
    """
    return d.clamped_floor.format(x=f"{p}score * {BINS} + {_NUDGE}", low=0, high=BINS - 1)


def _keys(d: Dialect, p: str = "") -> list[str]:
    nullable = (f"COALESCE({p}{name}, '')" for name in KEY[1:-1])
    return [d.hour.format(p=p), *nullable, bin_sql(d, p)]


def create_table(t: Tables, d: Dialect) -> str:
    """``CREATE TABLE`` of the histogram (empty: fill it with :func:`backfill`)."""
    columns = ", ".join(f"{name} {'INTEGER' if name == 'bin' else 'TEXT'} NOT NULL" for name in KEY)
    return (
        f"CREATE TABLE IF NOT EXISTS {t.bins} ({columns}, count {d.column_types['count']} "
        f"NOT NULL, PRIMARY KEY ({', '.join(KEY)})){d.keyed_table}"
    )


def _grouped(d: Dialect, source: str, sign: str = "") -> str:
    order = ", ".join(str(i + 1) for i in range(len(KEY)))
    # ORDER BY: concurrent writers take the histogram's row locks in one order (no deadlock).
    return (
        f"SELECT {', '.join(_keys(d))}, {sign}COUNT(*) FROM {source} WHERE score IS NOT NULL "
        f"GROUP BY {order} ORDER BY {order}"
    )


def backfill(t: Tables, d: Dialect) -> str:
    """The statement that fills an empty histogram from every stored score row."""
    return f"INSERT INTO {t.bins} ({', '.join(KEY)}, count) {_grouped(d, t.scores)}"


def _upsert(t: Tables, rows: str) -> str:
    return (
        f"INSERT INTO {t.bins} ({', '.join(KEY)}, count) {rows} "
        f"ON CONFLICT ({', '.join(KEY)}) DO UPDATE SET count = {t.bins}.count + excluded.count"
    )


def sqlite_triggers(t: Tables) -> list[str]:
    """SQLite's row triggers that keep the histogram equal to the binned scores."""
    d, b = SQLITE, t.bins

    def one(p: str, sign: str) -> str:
        # WHERE: no ambiguity between the SELECT and the upsert's ON CONFLICT; skips a row without score.
        return _upsert(t, f"SELECT {', '.join(_keys(d, p))}, {sign}1 WHERE {p}score IS NOT NULL")

    own = " AND ".join(f"{name} = {expr}" for name, expr in zip(KEY, _keys(d, "OLD."), strict=True))
    subtract = [one("OLD.", "-"), f"DELETE FROM {b} WHERE {own} AND count = 0"]
    return row_triggers(b, t.scores, add=[one("NEW.", "")], subtract=subtract)


def postgres_triggers(t: Tables) -> str:
    """PostgreSQL's statement triggers (transition tables: one grouped upsert per statement)."""
    d, b = POSTGRES, t.bins
    old_keys = (
        f"SELECT DISTINCT {', '.join(f'{k} AS k{i}' for i, k in enumerate(_keys(d)))} "
        "FROM agentevals_old WHERE score IS NOT NULL"
    )
    own = " AND ".join(f"{b}.{name} = o.k{i}" for i, name in enumerate(KEY))
    subtract = (
        f"{_upsert(t, _grouped(d, 'agentevals_old', '-'))}; "
        f"DELETE FROM {b} USING ({old_keys}) o WHERE {own} AND {b}.count = 0"
    )
    add = _upsert(t, _grouped(d, "agentevals_new"))
    return statement_triggers(b, t.scores, add=add, subtract=subtract)
