"""Whether a store is one this release reads and writes, shared by the SQLite and PostgreSQL schemas.

A store records its schema version in its meta table (``agentevals_meta``, key ``schema_version``). A
store of a version in :data:`UPGRADES_FROM` is upgraded when it is opened. A store without that record
but with tables of ours was written before the first release (or made by something else): it is refused
with what was found and how to keep its records, never altered.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentevals._store._errors import SinkConfigError
from agentevals._store._row import SCHEMA_VERSION, Tables

#: The schema versions a store is upgraded from in place (1: before the labels and versions tables).
UPGRADES_FROM = frozenset({1})


def store_tables(t: Tables) -> tuple[str, ...]:
    """Every table of the store of ``t``, the meta table first."""
    return (t.meta, t.scores, t.runs, t.rollup, t.bins, t.versions, t.scorers, t.drops, t.labels)


def refusal(version: int | None, found: Sequence[str], t: Tables, where: str) -> SinkConfigError | None:
    """Why the store at ``where`` cannot be used (``None`` if it can, is empty and will be created, or
    will be upgraded):
    ``version`` is its recorded schema version, ``found`` the names of :func:`store_tables` it has."""
    if version == SCHEMA_VERSION or version in UPGRADES_FROM or (version is None and not found):
        return None
    if version is not None and version > SCHEMA_VERSION:
        return SinkConfigError(
            f"{where} holds schema version {version}, newer than this agentevals reads and writes "
            f"({SCHEMA_VERSION}): upgrade agentevals (pip install -U agentevals-core), or use another store"
        )
    tables = ", ".join(name for name in found if name != t.meta)
    if t.meta not in found:
        recorded = f"no {t.meta} table recording its schema version"
    elif version is None:
        recorded = f"no schema version recorded in {t.meta}"
    else:
        recorded = f"schema version {version} recorded in {t.meta}"
    return SinkConfigError(
        f"{where} was not written by this release of agentevals: it has {tables} but {recorded} (a "
        "development version of agentevals wrote it, or something else made these tables). To keep its "
        "records, export them with the agentevals version that wrote it (agentevals export --db STORE "
        "--format jsonl --output old.jsonl; agentevals report --db old.jsonl reads that file), then "
        "delete the store or pass another path or table=: this release creates a new one"
    )
