"""What differs between SQLite and PostgreSQL in the store's SQL, in one place.

Every statement is written once, with ``?`` placeholders; a :class:`Dialect` turns it into its
database's text and holds the few expressions and column types that differ, as templates.

>>> POSTGRES.sql("SELECT score FROM s WHERE run_id = ? AND reason LIKE '%'")
"SELECT score FROM s WHERE run_id = %s AND reason LIKE '%%'"
>>> SQLITE.hour.format(p="NEW.")
'substr(NEW.created_at, 1, 13)'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from agentevals._store._hours import as_utc
from agentevals._store._row import utc_text

Kind = Literal["sqlite", "postgres"]


@dataclass(frozen=True)
class Dialect:
    """One database's spelling of the store's SQL (templates take the named ``{fields}``)."""

    kind: Kind
    #: The placeholder of a parameter.
    mark: str
    #: The column type of each column kind of ``_row.SCHEMA`` (and ``count``: a counter that may grow large).
    column_types: Mapping[str, str]
    #: What follows the definition of a table with a primary key.
    keyed_table: str
    #: Whether JSON columns read back as JSON text (SQLite) or as data (psycopg decodes JSONB).
    json_as_text: bool
    #: The UTC hour of ``{p}created_at`` as ``YYYY-MM-DDTHH`` (the rollup's and histogram's ``bucket``).
    hour: str
    #: The first moment of the hour ``{b}`` (a bucket expression), comparable to ``created_at``.
    hour_start: str
    #: The first moment after the hour ``{b}``.
    hour_end: str
    #: Per time bucket (``hour``, ``day``, ``week``), the label of a score row's ``created_at`` in it.
    times: Mapping[str, str]
    #: The same labels computed from a rollup or histogram row's hour ``bucket``.
    rolled_times: Mapping[str, str]
    #: The smaller of ``{a}`` and ``{b}``, either of which may be NULL (then the other).
    least: str
    #: The larger of ``{a}`` and ``{b}``, either of which may be NULL (then the other).
    greatest: str
    #: ``{x}`` rounded down to an integer and kept within ``[{low}, {high}]``.
    clamped_floor: str
    #: ``{x}`` rounded to 3 decimals, as a float.
    rounded: str
    #: The JSON column ``{c}`` as text.
    json_text: str
    #: The first ``{n}`` characters of the JSON column ``{c}`` as text.
    text_start: str
    #: Two columns that change when rows are added to a table (the newest rowid; or count and newest time).
    newest_rows: str
    #: A query of one parameter, a table's name, whose first column is not NULL in a row when it exists.
    table_lookup: str

    def sql(self, text: str) -> str:
        """``text``, written with ``?`` placeholders, in this dialect (``%`` doubled for psycopg)."""
        return text if self.mark == "?" else text.replace("%", "%%").replace("?", self.mark)

    def timestamp(self, moment: datetime) -> Any:
        """``moment`` as a parameter compared to ``created_at`` (naive means UTC): ISO-8601 UTC text in
        SQLite, where text order is time order, else the datetime."""
        return utc_text(as_utc(moment)) if self.kind == "sqlite" else as_utc(moment)


SQLITE = Dialect(
    kind="sqlite",
    mark="?",
    column_types={
        "text": "TEXT",
        "json": "TEXT",
        "real": "REAL",
        "integer": "INTEGER",
        "count": "INTEGER",
        "timestamp": "TEXT",
        "timestamp_null": "TEXT",
    },
    keyed_table=" WITHOUT ROWID",
    json_as_text=True,
    hour="substr({p}created_at, 1, 13)",
    hour_start="{b}",
    hour_end="{b} || ';'",  # ISO text: the hour is followed by ':', and ';' sorts right after it
    times={
        "hour": "substr(created_at, 1, 13) || ':00'",
        "day": "substr(created_at, 1, 10)",
        "week": "date(substr(created_at, 1, 10), 'weekday 0', '-6 days')",
    },
    rolled_times={
        "hour": "bucket || ':00'",
        "day": "substr(bucket, 1, 10)",
        "week": "date(substr(bucket, 1, 10), 'weekday 0', '-6 days')",
    },
    least="COALESCE(min({a}, {b}), {a}, {b})",
    greatest="COALESCE(max({a}, {b}), {a}, {b})",
    clamped_floor="max({low}, min({high}, CAST({x} AS INTEGER)))",
    rounded="ROUND({x}, 3)",
    json_text="{c}",
    text_start="substr({c}, 1, {n})",
    newest_rows="MAX(rowid), NULL",
    table_lookup="SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
)
POSTGRES = Dialect(
    kind="postgres",
    mark="%s",
    column_types={
        "text": "TEXT",
        "json": "JSONB",
        "real": "DOUBLE PRECISION",
        "integer": "INTEGER",
        "count": "BIGINT",
        "timestamp": "TIMESTAMPTZ NOT NULL",
        "timestamp_null": "TIMESTAMPTZ",
    },
    keyed_table="",
    json_as_text=False,
    hour="to_char({p}created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24')",
    hour_start="(({b}) || ':00:00+00')::timestamptz",
    hour_end="(({b}) || ':00:00+00')::timestamptz + interval '1 hour'",
    times={
        "hour": "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24\":00\"')",
        "day": "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
        "week": "to_char(date_trunc('week', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')",
    },
    rolled_times={
        "hour": "bucket || ':00'",
        "day": "substr(bucket, 1, 10)",
        "week": "to_char(substr(bucket, 1, 10)::date "
        "- (EXTRACT(ISODOW FROM substr(bucket, 1, 10)::date)::int - 1), 'YYYY-MM-DD')",
    },
    least="LEAST({a}, {b})",
    greatest="GREATEST({a}, {b})",
    clamped_floor="GREATEST({low}, LEAST({high}, floor({x})::integer))",
    rounded="ROUND({x}::numeric, 3)::float8",
    json_text="{c}::text",
    text_start="left({c}::text, {n})",
    newest_rows="COUNT(*), MAX(created_at)",
    table_lookup="SELECT to_regclass(?)",
)


def dialect_of(kind: Kind) -> Dialect:
    """The dialect of a store of ``kind``."""
    return SQLITE if kind == "sqlite" else POSTGRES
