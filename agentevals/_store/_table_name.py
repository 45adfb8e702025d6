"""Which table names a store accepts: a name goes into every statement as it is, so it must be a plain
SQL identifier that neither SQLite nor PostgreSQL reserves."""

from __future__ import annotations

import re

# 48 characters at most: PostgreSQL cuts identifiers at 63 bytes, and index names add up to 15.
TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,47}$")
#: Words SQLite or PostgreSQL reserve: as a table name they break (or change) the statements.
_KEYWORDS = """
abort action add after all alter always analyse analyze and any array as asc asymmetric attach
autoincrement before begin between both by cascade case cast check collate column commit
conflict constraint create cross current current_catalog current_date current_role current_time
current_timestamp current_user database default deferrable deferred delete desc detach distinct
do drop each else end escape except exclude exclusive exists explain fail fetch filter first
following for foreign from full generated glob grant group groups having if ignore immediate in
index indexed initially inner insert instead intersect into is isnull join key last lateral
leading left like limit localtime localtimestamp match materialized natural no not nothing
notnull null nulls of offset on only or order others outer over partition placing plan pragma
preceding primary query raise range recursive references regexp reindex release rename replace
restrict returning right rollback row rows savepoint select session_user set some symmetric
table temp temporary then ties to trailing transaction trigger unbounded union unique update
user using vacuum values variadic view virtual when where window with without
"""
SQL_KEYWORDS = frozenset(_KEYWORDS.split())


def check_table(table: str) -> str:
    """``table`` if it is a safe SQL identifier, else a ``ValueError`` saying what is allowed.

    >>> check_table("evals")
    'evals'
    >>> check_table("select")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: invalid table name 'select': it is an SQL keyword ... e.g. 'agentevals_select'
    """
    if not isinstance(table, str) or not TABLE_NAME.match(table):
        raise ValueError(
            f"invalid table name {table!r}: use letters, digits and underscores, starting with a "
            "letter or underscore, at most 48 characters (e.g. 'agentevals_scores')"
        )
    if table.lower() in SQL_KEYWORDS or table.lower().startswith(("sqlite_", "pg_")):
        raise ValueError(
            f"invalid table name {table!r}: it is an SQL keyword or a name the database reserves; "
            f"pick another, e.g. 'agentevals_{table.lower()}'"
        )
    return table
