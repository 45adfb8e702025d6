"""People's labels of runs (``agentevals_labels``): the table, its writes, and the reads that set labels
beside the score records of the runs they label.

One row per label: ``label_id`` (32 hex digits), ``run_id``, ``name`` (a scorer id, or a free name
such as ``helpful``), ``value`` in [0, 1] (a pass is 1.0, a fail 0.0), ``kind`` (``pass_fail`` or
``score``), ``labeller`` (``''`` when unknown), an optional ``note`` and ``created_at`` (UTC). Labels
are never replaced: several people may label one run, and a run may be labelled before it is scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from agentevals._model._thresholds import Threshold
from agentevals._store._dialect import Dialect
from agentevals._store._reading import Reading, source_condition, where
from agentevals._store._row import Tables

#: The columns of the labels table, in order.
LABEL_COLUMNS = ("label_id", "run_id", "name", "value", "kind", "labeller", "note", "created_at")
#: What a label's ``kind`` may be.
KINDS = ("pass_fail", "score")
#: The columns of a score record :func:`labelled_records` and :func:`label_pairs` give after their own.
RECORD_FIELDS = ("scorer_version", "outcome", "score", "reason", "created_at")


def create_statements(t: Tables, d: Dialect) -> list[str]:
    """``CREATE TABLE`` / ``CREATE INDEX`` of the labels table (idempotent)."""
    real, moment = d.column_types["real"], d.column_types["timestamp_null"]
    kinds = ", ".join(f"'{kind}'" for kind in KINDS)
    return [
        f"CREATE TABLE IF NOT EXISTS {t.labels} (label_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, "
        f"name TEXT NOT NULL, value {real} NOT NULL CHECK (value >= 0 AND value <= 1), "
        f"kind TEXT NOT NULL CHECK (kind IN ({kinds})), labeller TEXT NOT NULL DEFAULT '', note TEXT, "
        f"created_at {moment} NOT NULL){d.keyed_table}",
        f"CREATE INDEX IF NOT EXISTS {t.labels}_name_run_idx ON {t.labels} (name, run_id)",
    ]


def insert_labels(q: Reading, rows: Sequence[Sequence[Any]]) -> None:
    """Store ``rows`` (values in :data:`LABEL_COLUMNS` order) in one transaction: all or none."""
    sql = q.dialect.sql(
        f"INSERT INTO {q.tables.labels} ({', '.join(LABEL_COLUMNS)}) "
        f"VALUES ({', '.join('?' for _ in LABEL_COLUMNS)})"
    )
    if q.dialect.kind == "postgres":
        with q.conn.transaction(), q.conn.cursor() as cursor:
            cursor.executemany(sql, [list(row) for row in rows])
        return
    q.conn.execute("BEGIN IMMEDIATE")
    try:
        q.conn.executemany(sql, rows)
        q.conn.execute("COMMIT")
    except BaseException:
        if q.conn.in_transaction:
            q.conn.execute("ROLLBACK")
        raise


def delete_label(q: Reading, label_id: str) -> bool:
    """Delete the label ``label_id``; whether there was one."""
    cursor = q.conn.cursor()
    try:
        cursor.execute(q.dialect.sql(f"DELETE FROM {q.tables.labels} WHERE label_id = ?"), [label_id])
        return bool(cursor.rowcount)
    finally:
        cursor.close()


def label_rows(q: Reading, *, run_id: str | None, name: str | None) -> list[tuple[Any, ...]]:
    """The labels (:data:`LABEL_COLUMNS`) of ``run_id`` / named ``name`` when given, oldest first."""
    clause, params = where([("run_id = ?", run_id), ("name = ?", name)])
    return q.rows(
        f"SELECT {', '.join(LABEL_COLUMNS)} FROM {q.tables.labels}{clause} ORDER BY created_at, label_id",
        params,
    )


def label_names(q: Reading) -> list[str]:
    """The distinct names of the stored labels (none when the table was dropped by hand)."""
    if not q.has_table(q.tables.labels):
        return []
    return [row[0] for row in q.rows(f"SELECT DISTINCT name FROM {q.tables.labels}")]


def labelled_records(q: Reading, name: str, version: str | None) -> list[tuple[Any, ...]]:
    """The score records of scorer ``name`` (at ``version`` when given) on the runs labelled ``name``:
    ``run_id`` then :data:`RECORD_FIELDS`, oldest first."""
    clause, params = where([("s.scorer_version = ?", version)], always=["s.scorer_id = ?"])
    fields = ", ".join(f"s.{field}" for field in RECORD_FIELDS)
    return q.rows(
        f"SELECT s.run_id, {fields} FROM {q.tables.scores} s{clause} AND s.run_id IN "
        f"(SELECT run_id FROM {q.tables.labels} WHERE name = ?) ORDER BY s.created_at, s.id",
        [name, *params, name],
    )


def label_pairs(q: Reading, scorer_id: str, version: str | None) -> list[tuple[Any, ...]]:
    """Each label named ``scorer_id`` beside each scored record of that scorer (at ``version`` when
    given) on the run it labels: ``label_id, run_id, value, kind, labeller, scorer_version, score,
    created_at`` (the record's). A run scored several times by one version gives a row per record."""
    clause, params = where(
        [("s.scorer_version = ?", version)],
        always=["l.name = ?", "s.scorer_id = ?", "s.outcome = 'scored'", "s.score IS NOT NULL"],
    )
    return q.rows(
        "SELECT l.label_id, l.run_id, l.value, l.kind, l.labeller, s.scorer_version, s.score, s.created_at "
        f"FROM {q.tables.labels} l JOIN {q.tables.scores} s ON s.run_id = l.run_id{clause}",
        [scorer_id, scorer_id, *params],
    )


def count_labels(q: Reading, name: str) -> int:
    """How many labels are named ``name``."""
    return int(q.rows(f"SELECT COUNT(*) FROM {q.tables.labels} WHERE name = ?", [name])[0][0])


def version_pass_counts(
    q: Reading,
    scorer_id: str,
    threshold: Threshold,
    *,
    version: str | None,
    since: datetime | None,
    source: str | None,
) -> list[tuple[Any, ...]]:
    """Per version of ``scorer_id`` (at ``version`` when given; records created at or after ``since``, of
    ``source``): ``scorer_version, scores, errored records, scores meeting threshold, newest created_at``
    (skipped records are neither)."""
    bounds, bound_params = ["score IS NOT NULL"], []
    for bound, value in (("score >= ?", threshold.min), ("score <= ?", threshold.max)):
        if value is not None:
            bounds.append(bound)
            bound_params.append(value)
    clause, params = where(
        [
            ("created_at >= ?", None if since is None else q.dialect.timestamp(since)),
            source_condition(source),
            ("scorer_version = ?", version),
        ],
        always=["scorer_id = ?", "outcome <> 'skipped'"],
    )
    return q.rows(
        f"SELECT scorer_version, COUNT(score), COUNT(*) - COUNT(score), "
        f"SUM(CASE WHEN {' AND '.join(bounds)} THEN 1 ELSE 0 END), MAX(created_at) "
        f"FROM {q.tables.scores}{clause} GROUP BY scorer_version",
        [*bound_params, scorer_id, *params],
    )
