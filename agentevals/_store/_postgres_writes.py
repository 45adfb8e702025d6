"""The statements that write score and runs rows into a PostgreSQL store: ``COPY`` of value rows, and
an insert of the rows of one JSON array parameter that PostgreSQL unpacks."""

from __future__ import annotations

from agentevals._store._row import COLUMNS, SCHEMA, replace_on_conflict

#: The type of each scores column in ``COPY`` (it sends text; each column's type parses it on the server).
COPY_TYPES = [{"real": "float8", "integer": "int8"}.get(kind, "text") for _, kind in SCHEMA]


def copy_sql(table: str) -> str:
    """``COPY`` of score rows (in ``COLUMNS`` order, typed as :data:`COPY_TYPES`) into ``table``.

    >>> copy_sql("scores").startswith("COPY scores (id, created_at, run_id,")
    True
    """
    return f"COPY {table} ({', '.join(COLUMNS)}) FROM STDIN"


def insert_json_sql(table: str, schema: tuple[tuple[str, str], ...], *, replace: bool) -> str:
    """``INSERT ... ON CONFLICT DO NOTHING`` of the rows of one JSON array parameter, each row an array
    in ``schema``'s column order (``replace``: ``ON CONFLICT (id) DO UPDATE``).

    >>> insert_json_sql("t", (("id", "text"), ("score", "real")), replace=False).split(" FROM ")[0]
    'INSERT INTO t (id, score) SELECT (r->>0), (r->>1)::double precision'
    """
    columns = ", ".join(name for name, _ in schema)
    values = ", ".join(_extract(i, kind) for i, (_, kind) in enumerate(schema))
    conflict = replace_on_conflict(schema) if replace else "ON CONFLICT DO NOTHING"
    rows = "jsonb_array_elements(%s::jsonb) AS r"
    return f"INSERT INTO {table} ({columns}) SELECT {values} FROM {rows} {conflict}"


def _extract(index: int, kind: str) -> str:
    if kind == "json":
        return f"NULLIF(r->{index}, 'null'::jsonb)"
    if kind == "text":
        return f"(r->>{index})"
    cast = {"real": "double precision", "integer": "integer"}.get(kind, "timestamptz")
    return f"(r->>{index})::{cast}"
