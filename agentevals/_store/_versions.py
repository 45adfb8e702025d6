"""Where each scorer version first appears (beside the rollup): per (scorer, version), the earliest
``created_at`` of its score rows, kept by triggers like the rollup, so the time charts' version marks
read a few rows instead of grouping every score.

An insert lowers ``first_at`` when its row is earlier (records may arrive out of order: replays,
workers), so a re-sent batch changes nothing. A delete, or a replacement (``rescore --force``), of the
row a version's ``first_at`` came from moves it to that version's next row, looked up through the
(scorer, created_at) index from there, or removes the version when none is left. Rows without a scorer
are not kept; a row without a version is kept under ``''``, which readers turn back into ``None``.
"""

from __future__ import annotations

from agentevals._store._dialect import Dialect
from agentevals._store._rollup import row_triggers, statement_triggers
from agentevals._store._row import Tables

#: The table's key columns.
KEY = ("scorer_id", "scorer_version")
_COLUMNS = "scorer_id, scorer_version, first_at"


def create_table(t: Tables, d: Dialect) -> str:
    """``CREATE TABLE`` of the versions table (empty: fill it with :func:`backfill`)."""
    keys = ", ".join(f"{name} TEXT NOT NULL" for name in KEY)
    return (
        f"CREATE TABLE IF NOT EXISTS {t.versions} ({keys}, first_at {d.column_types['timestamp_null']} "
        f"NOT NULL, PRIMARY KEY ({', '.join(KEY)})){d.keyed_table}"
    )


def _firsts(source: str) -> str:
    """``SELECT`` of ``scorer_id, scorer_version, first_at`` per version of the score rows in ``source``."""
    return (
        f"SELECT scorer_id, COALESCE(scorer_version, '') AS scorer_version, MIN(created_at) AS first_at "
        f"FROM {source} WHERE scorer_id IS NOT NULL GROUP BY 1, 2"
    )


def backfill(t: Tables) -> str:
    """The statement that fills an empty versions table from every stored score row."""
    return f"INSERT INTO {t.versions} ({_COLUMNS}) {_firsts(t.scores)}"


def _lower(t: Tables, rows: str) -> str:
    """Store ``rows`` (``scorer_id, scorer_version, first_at``), keeping the earlier ``first_at``."""
    v = t.versions
    return (
        f"INSERT INTO {v} ({_COLUMNS}) {rows} ON CONFLICT ({', '.join(KEY)}) "
        f"DO UPDATE SET first_at = excluded.first_at WHERE excluded.first_at < {v}.first_at"
    )


def _first_from(scorer: str, version: str, after: str) -> str:
    """The conditions and order that give, first, the score row ``s`` of ``scorer`` at ``version``
    created at or after ``after`` (walked through the (scorer, created_at) index)."""
    return (
        f"s.scorer_id = {scorer} AND s.created_at >= {after} "
        f"AND COALESCE(s.scorer_version, '') = {version} ORDER BY s.created_at LIMIT 1"
    )


def sqlite_triggers(t: Tables) -> list[str]:
    """SQLite's row triggers that keep the versions table equal to the first rows of the scores table."""
    v = t.versions
    version = "COALESCE(OLD.scorer_version, '')"
    own = f"scorer_id = OLD.scorer_id AND scorer_version = {version}"
    add = _lower(
        t,
        "SELECT NEW.scorer_id, COALESCE(NEW.scorer_version, ''), NEW.created_at "
        "WHERE NEW.scorer_id IS NOT NULL",
    )
    subtract = [
        f"DELETE FROM {v} WHERE {own} AND first_at = OLD.created_at",
        # NOT EXISTS (no column of s): tested once, before the walk, which runs only if the row was gone.
        f"INSERT INTO {v} ({_COLUMNS}) SELECT s.scorer_id, {version}, s.created_at FROM {t.scores} s "
        f"WHERE NOT EXISTS (SELECT 1 FROM {v} WHERE {own}) AND "
        + _first_from("OLD.scorer_id", version, "OLD.created_at"),
    ]
    return row_triggers(v, t.scores, add=[add], subtract=subtract)


def postgres_triggers(t: Tables) -> str:
    """PostgreSQL's statement triggers (transition tables: one grouped upsert per statement, COPY too)."""
    v = t.versions
    own = f"{v}.scorer_id = o.scorer_id AND {v}.scorer_version = o.scorer_version"
    old = f"({_firsts('agentevals_old')}) o"
    following = f"SELECT s.created_at FROM {t.scores} s WHERE " + _first_from(
        "o.scorer_id", "o.scorer_version", "o.first_at"
    )
    subtract = f"DELETE FROM {v} USING {old} WHERE {own} AND {v}.first_at = o.first_at; " + _lower(
        t,
        f"SELECT o.scorer_id, o.scorer_version, n.created_at FROM {old} CROSS JOIN LATERAL ({following}) n "
        f"WHERE NOT EXISTS (SELECT 1 FROM {v} WHERE {own}) ORDER BY 1, 2",
    )
    # NOT EXISTS: a version already stored as early is left as it is, unlocked (the common case);
    # ORDER BY: concurrent writers take the table's row locks in one order (no deadlock).
    add = _lower(
        t,
        f"SELECT o.scorer_id, o.scorer_version, o.first_at FROM ({_firsts('agentevals_new')}) o "
        f"WHERE NOT EXISTS (SELECT 1 FROM {v} WHERE {own} AND {v}.first_at <= o.first_at) ORDER BY 1, 2",
    )
    return statement_triggers(v, t.scores, add=add, subtract=subtract)
