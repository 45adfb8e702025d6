"""The rollup table: per-hour aggregates of the scores table that the database keeps
up to date with triggers, so the report and the viewer read a few thousand rows instead of every score.

One row per (hour bucket, entity, scorer, source, outcome, skip reason, error type) holds the number of
rows, of scores, their sum and sum of squares, extremes, how many rows had a cost, the cost and tokens.
An insert adds its row; a delete subtracts it; an update (``rescore --force`` replacing a row) does
both, and the extremes of the key it left are recomputed from the rows (one hour of one scorer, through
the (scorer, created_at) index). A re-sent batch inserts nothing, so it changes nothing. ``NULL`` key
values are stored as ``''`` (a primary key cannot hold ``NULL``); readers turn ``''`` back into ``None``.
"""

from __future__ import annotations

from agentevals._store._dialect import POSTGRES, SQLITE, Dialect
from agentevals._store._row import Tables

#: The rollup's key columns, in order (``bucket``: the UTC hour of ``created_at``, ``YYYY-MM-DDTHH``).
KEY = ("bucket", "entity", "scorer_id", "source", "outcome", "skip_reason", "error_type")
_NULLABLE = KEY[1:]
#: (column, column kind) of the aggregates (see ``Dialect.column_types``).
VALUES = (
    ("rows", "count"),
    ("scores", "count"),
    ("total", "real"),
    ("squares", "real"),
    ("low", "real"),
    ("high", "real"),
    ("priced", "count"),
    ("cost", "real"),
    ("tokens", "count"),
)


def _keys(d: Dialect, p: str = "") -> list[str]:
    return [d.hour.format(p=p), *(f"COALESCE({p}{name}, '')" for name in _NULLABLE)]


def grouped(d: Dialect, source: str, sign: str = "") -> str:
    """``SELECT`` of the rollup rows of the score rows in ``source`` (a table), ``sign`` ``-`` to
    subtract them (extremes then left out: they are recomputed)."""
    keys = _keys(d)
    low, high = ("NULL", "NULL") if sign else ("MIN(score)", "MAX(score)")
    values = [
        f"{sign}COUNT(*)",
        f"{sign}COUNT(score)",
        f"{sign}COALESCE(SUM(score), 0)",
        f"{sign}COALESCE(SUM(score * score), 0)",
        low,
        high,
        f"{sign}COUNT(cost_usd)",
        f"{sign}COALESCE(SUM(cost_usd), 0)",
        f"{sign}(COALESCE(SUM(prompt_tokens), 0) + COALESCE(SUM(completion_tokens), 0))",
    ]
    order = ", ".join(str(i + 1) for i in range(len(keys)))
    # ORDER BY: concurrent writers take the rollup's row locks in one order (no deadlock).
    return f"SELECT {', '.join(keys + values)} FROM {source} GROUP BY {order} ORDER BY {order}"


def _one_row(d: Dialect, p: str, sign: str) -> str:
    """``VALUES`` of the rollup row of the single score row ``p`` (``NEW.`` / ``OLD.``)."""
    values = [
        f"{sign}1",
        f"{sign}({p}score IS NOT NULL)",
        f"{sign}COALESCE({p}score, 0)",
        f"{sign}COALESCE({p}score * {p}score, 0)",
        "NULL" if sign else f"{p}score",
        "NULL" if sign else f"{p}score",
        f"{sign}({p}cost_usd IS NOT NULL)",
        f"{sign}COALESCE({p}cost_usd, 0)",
        f"{sign}(COALESCE({p}prompt_tokens, 0) + COALESCE({p}completion_tokens, 0))",
    ]
    return f"VALUES ({', '.join(_keys(d, p) + values)})"


def _upsert(d: Dialect, t: Tables, rows: str) -> str:
    r = t.rollup
    sets = [f"{name} = {r}.{name} + excluded.{name}" for name, _ in VALUES if name not in ("low", "high")]
    sets.append("low = " + d.least.format(a=f"{r}.low", b="excluded.low"))
    sets.append("high = " + d.greatest.format(a=f"{r}.high", b="excluded.high"))
    columns = ", ".join([*KEY, *(name for name, _ in VALUES)])
    return (
        f"INSERT INTO {r} ({columns}) {rows} ON CONFLICT ({', '.join(KEY)}) DO UPDATE SET {', '.join(sets)}"
    )


def _extremes(d: Dialect, t: Tables, key: list[str], tail: str) -> str:
    """Recompute low/high of the rollup rows chosen by ``tail`` from the score rows of their key
    (``key``: its expressions, in :data:`KEY` order)."""
    bucket = key[0]
    match = " AND ".join(
        [
            f"s.scorer_id = {key[2]}",
            f"s.created_at >= {d.hour_start.format(b=bucket)}",
            f"s.created_at < {d.hour_end.format(b=bucket)}",
            *(
                f"COALESCE(s.{name}, '') = {expr}"
                for name, expr in zip(KEY, key, strict=True)
                if name not in ("bucket", "scorer_id")
            ),
        ]
    )
    return (
        f"UPDATE {t.rollup} SET low = (SELECT MIN(s.score) FROM {t.scores} s WHERE {match}), "
        f"high = (SELECT MAX(s.score) FROM {t.scores} s WHERE {match}) {tail}"
    )


def create_table(t: Tables, d: Dialect) -> str:
    """``CREATE TABLE`` of the rollup (empty: fill it with :func:`backfill`)."""
    keys = ", ".join(f"{name} TEXT NOT NULL" for name in KEY)
    values = ", ".join(
        f"{name} {d.column_types[kind]}{'' if name in ('low', 'high') else ' NOT NULL'}"
        for name, kind in VALUES
    )
    return (
        f"CREATE TABLE IF NOT EXISTS {t.rollup} ({keys}, {values}, PRIMARY KEY ({', '.join(KEY)}))"
        f"{d.keyed_table}"
    )


def backfill(t: Tables, d: Dialect) -> str:
    """The statement that fills an empty rollup from every stored score row."""
    columns = ", ".join([*KEY, *(name for name, _ in VALUES)])
    return f"INSERT INTO {t.rollup} ({columns}) {grouped(d, t.scores)}"


def sqlite_triggers(t: Tables) -> list[str]:
    """SQLite's row triggers that keep the rollup equal to the aggregates of the scores table."""
    d, r = SQLITE, t.rollup
    empty = f"DELETE FROM {r} WHERE rows = 0"
    old_key = _keys(d, "OLD.")
    own = " AND ".join(f"{name} = {expr}" for name, expr in zip(KEY, old_key, strict=True))
    subtract = [_upsert(d, t, _one_row(d, "OLD.", "-")), _extremes(d, t, old_key, f"WHERE {own}"), empty]
    add = _upsert(d, t, _one_row(d, "NEW.", ""))
    return row_triggers(r, t.scores, add=[add], subtract=subtract)


def row_triggers(prefix: str, scores: str, *, add: list[str], subtract: list[str]) -> list[str]:
    """SQLite's row triggers ``{prefix}_insert`` / ``_delete`` / ``_update`` on ``scores``: ``add`` runs
    for the new row (``NEW.``), ``subtract`` for the old one (``OLD.``), an update does both."""
    bodies = {"insert": add, "delete": subtract, "update": [*subtract, *add]}
    return [
        f"CREATE TRIGGER IF NOT EXISTS {prefix}_{event} AFTER {event.upper()} ON {scores} "
        f"BEGIN {'; '.join(body)}; END"
        for event, body in bodies.items()
    ]


def postgres_triggers(t: Tables) -> str:
    """PostgreSQL's statement triggers (transition tables: one grouped upsert per statement, COPY too)."""
    d, r = POSTGRES, t.rollup
    empty = f"DELETE FROM {r} WHERE rows = 0"
    old_keys = (
        f"SELECT DISTINCT {', '.join(f'{k} AS k{i}' for i, k in enumerate(_keys(d)))} FROM agentevals_old"
    )
    key = [f"o.k{i}" for i in range(len(KEY))]
    own = " AND ".join(f"{r}.{name} = o.k{i}" for i, name in enumerate(KEY))
    extremes = _extremes(d, t, key, f"FROM ({old_keys}) o WHERE {own}")
    subtract = f"{_upsert(d, t, grouped(d, 'agentevals_old', '-'))}; {extremes}; {empty}"
    add = _upsert(d, t, grouped(d, "agentevals_new"))
    return statement_triggers(r, t.scores, add=add, subtract=subtract)


def statement_triggers(prefix: str, scores: str, *, add: str, subtract: str) -> str:
    """PostgreSQL functions and statement triggers ``{prefix}_insert`` / ``_delete`` / ``_update`` on
    ``scores``: ``add`` runs over the statement's new rows (transition table ``agentevals_new``),
    ``subtract`` over its old rows (``agentevals_old``), an update does both."""
    bodies = {
        "insert": (add, "REFERENCING NEW TABLE AS agentevals_new"),
        "delete": (subtract, "REFERENCING OLD TABLE AS agentevals_old"),
        "update": (
            f"{subtract}; {add}",
            "REFERENCING OLD TABLE AS agentevals_old NEW TABLE AS agentevals_new",
        ),
    }
    statements = []
    for event, (body, referencing) in bodies.items():
        name = f"{prefix}_{event}"
        statements += [
            f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $agentevals$ "
            f"BEGIN {body}; RETURN NULL; END $agentevals$",
            f"DROP TRIGGER IF EXISTS {name} ON {scores}",
            f"CREATE TRIGGER {name} AFTER {event.upper()} ON {scores} {referencing} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {name}()",
        ]
    return ";\n".join(statements)
