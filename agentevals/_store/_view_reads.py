"""The reads behind ``agentevals view`` over the score and runs rows: read-only, parameterised, written
once for SQLite and PostgreSQL (see ``_dialect``). Where the rollup and histogram cannot answer (an eval
id filtered, scores outside 0..1, a threshold between bins), the scores are grouped into bins
(``ROUND(score, 3)``) so that percentiles and histograms come from a few thousand grouped rows; the
rollup's own reads are ``_rollup_reads``, the labels' ``_labels`` (here only the state of the labels
table the viewer's caches key on).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from agentevals._store._hours import hour_bucket
from agentevals._store._reading import Reading, source_condition, where
from agentevals._store._row import COLUMNS, RUN_COLUMNS


class ScoreFilter(Protocol):
    """What a read narrows the score rows to (the viewer's ``Filters``): ``created_at`` in
    ``[since, until)`` (naive means UTC), an entity, an evaluation, a source; ``None``: any."""

    @property
    def since(self) -> datetime | None: ...

    @property
    def until(self) -> datetime | None: ...

    @property
    def entity(self) -> str | None: ...

    @property
    def eval_id(self) -> str | None: ...

    @property
    def source(self) -> str | None: ...


def filtered(q: Reading, f: ScoreFilter, alias: str = "", extra: Sequence[str] = ()) -> tuple[str, list[Any]]:
    """The ``WHERE`` clause of ``f`` over a scores table (columns prefixed with ``alias``), after the
    ``extra`` clauses (whose parameters go first), and its parameters."""
    moment = q.dialect.timestamp
    return where(
        [
            (f"{alias}created_at >= ?", None if f.since is None else moment(f.since)),
            (f"{alias}created_at < ?", None if f.until is None else moment(f.until)),
            (f"{alias}entity = ?", f.entity),
            (f"{alias}eval_id = ?", f.eval_id),
            source_condition(f.source, f"{alias}source"),
        ],
        always=extra,
    )


def newest_rows(q: Reading) -> tuple[Any, ...]:
    """Values that change when rows are added to the store: the newest row of the scores and the runs
    tables (SQLite: its rowid; PostgreSQL: the row count and newest timestamp)."""
    sql = f"SELECT {q.dialect.newest_rows} FROM {{}}"
    return (*q.rows(sql.format(q.tables.scores))[0], *q.rows(sql.format(q.tables.runs))[0])


def labels_state(q: Reading) -> tuple[Any, ...]:
    """Values that change when a label is added or deleted: the labels' count and newest ``created_at``
    (``(0, None)`` without a labels table)."""
    if not q.has_table(q.tables.labels):
        return (0, None)
    count, newest = q.rows(f"SELECT COUNT(*), MAX(created_at) FROM {q.tables.labels}")[0]
    return (int(count), _text(newest))


# -- choices for the filter forms ------------------------------------------------------------------------


def choices(q: Reading, limit: int) -> dict[str, Any]:
    """The filter forms' choices: the store's entities, scorers and eval ids (at most ``limit`` of
    each, sorted) and the first and last ``created_at`` of its scores. Entities and scorers come from
    the rollup (a few thousand rows, not every score; its ``''``, a ``NULL``, no filter can choose), eval
    ids through their index, the time range from two lookups per scorer in the (scorer, created_at)
    index (a scan beyond 100 scorers)."""
    pairs = q.rows(f"SELECT entity, scorer_id FROM {q.tables.rollup} GROUP BY 1, 2")
    names = sorted({str(s) for _, s in pairs})
    evals = q.rows(
        f"SELECT eval_id FROM {q.tables.scores} WHERE eval_id IS NOT NULL GROUP BY eval_id "
        f"ORDER BY 1 LIMIT {int(limit)}"
    )
    return {
        "entities": sorted({str(e) for e, _ in pairs if e})[:limit],
        "scorers": [name for name in names if name][:limit],
        "evals": [str(row[0]) for row in evals],
        "range": _time_range(q, names),
    }


def _time_range(q: Reading, names: list[str]) -> tuple[str | None, str | None]:
    scores = q.tables.scores
    if len(names) > 100:
        low, high = q.rows(f"SELECT MIN(created_at), MAX(created_at) FROM {scores}")[0]
        return _text(low), _text(high)
    ends = [
        f"SELECT (SELECT MIN(created_at) FROM {scores} WHERE scorer_id = ?) AS low, "
        f"(SELECT MAX(created_at) FROM {scores} WHERE scorer_id = ?) AS high"
        for _ in names
    ]
    ends.append(  # the rollup's '' is also a NULL scorer id
        f"SELECT MIN(created_at) AS low, MAX(created_at) AS high FROM {scores} WHERE scorer_id IS NULL"
    )
    low, high = q.rows(
        f"SELECT MIN(low), MAX(high) FROM ({' UNION ALL '.join(ends)}) ends",
        [name for name in names for _ in range(2)],
    )[0]
    return _text(low), _text(high)


def latest_evals(q: Reading, limit: int) -> list[str]:
    """The ids of the most recent evaluations, newest first (a canary epoch's id is none)."""
    clause, params = where([source_condition(None)], always=["eval_id IS NOT NULL"])
    rows = q.rows(
        f"SELECT eval_id FROM {q.tables.scores}{clause} GROUP BY eval_id "
        f"ORDER BY MAX(created_at) DESC LIMIT {int(limit)}",
        params,
    )
    return [str(row[0]) for row in rows]


# -- coverage --------------------------------------------------------------------------------------------


def scorers_since(q: Reading, since: datetime | None) -> list[str]:
    """The scorers the rollup has rows of from the UTC hour of ``since`` on (or any), sorted."""
    clause, params = where([("bucket >= ?", None if since is None else hour_bucket(since))])
    rows = q.rows(f"SELECT DISTINCT scorer_id FROM {q.tables.rollup}{clause} ORDER BY 1", params)
    return [str(row[0]) for row in rows]


def covered_runs(q: Reading, scorer: str, f: ScoreFilter) -> tuple[int, int]:
    """``(rows, distinct runs)`` of one scorer under ``f`` (through its (scorer, created_at) index)."""
    clause, params = filtered(q, f, extra=["scorer_id = ?"])
    rows, runs = q.rows(
        f"SELECT COUNT(*), COUNT(DISTINCT run_id) FROM {q.tables.scores}{clause}", [scorer, *params]
    )[0]
    return int(rows), int(runs)


def stored_runs(q: Reading, f: ScoreFilter) -> int:
    """How many runs are stored under ``f``."""
    clause, params = filtered(q, f)
    return int(q.rows(f"SELECT COUNT(*) FROM {q.tables.runs}{clause}", params)[0][0])


# -- distributions ---------------------------------------------------------------------------------------


def binned_outcomes(
    q: Reading, f: ScoreFilter, bounds: dict[str, tuple[float, float]], default: tuple[float, float]
) -> list[tuple[str, str, str | None, float | None, int, int]]:
    """``(scorer_id, outcome, error_type, bin, count, passed)``: scores per scorer and outcome, binned;
    ``passed`` counts the scores within the scorer's ``(low, high)`` bounds (``default`` for a scorer
    not in ``bounds``; exact, not binned)."""
    cases = " ".join("WHEN ? THEN ?" for _ in bounds)
    low, high = (f"CASE scorer_id {cases} ELSE ? END" if bounds else "?" for _ in range(2))
    case_params: list[Any] = [
        v
        for side in (0, 1)
        for v in (*(x for name, pair in bounds.items() for x in (name, pair[side])), default[side])
    ]
    clause, params = filtered(q, f)
    binned = q.dialect.rounded.format(x="score")
    rows = q.rows(
        f"SELECT scorer_id, outcome, error_type, {binned}, COUNT(*), "
        f"SUM(CASE WHEN score >= {low} AND score <= {high} THEN 1 ELSE 0 END) "
        f"FROM {q.tables.scores}{clause} GROUP BY scorer_id, outcome, error_type, {binned}",
        [*case_params, *params],
    )
    return [(s, o, e, None if b is None else float(b), int(n), int(p or 0)) for s, o, e, b, n, p in rows]


def passes(q: Reading, scorer: str, f: ScoreFilter, bounds: tuple[float, float]) -> int:
    """How many of one scorer's scores lie within ``(low, high)`` (through its (scorer, created_at)
    index)."""
    clause, params = filtered(q, f, extra=["scorer_id = ?", "score >= ?", "score <= ?"])
    return int(q.rows(f"SELECT COUNT(*) FROM {q.tables.scores}{clause}", [scorer, *bounds, *params])[0][0])


def series(
    q: Reading, scorer: str, f: ScoreFilter, bucket: str, bounds: tuple[float, float]
) -> list[tuple[str, str, str | None, float | None, int, int, float | None, int, float]]:
    """One scorer's rows over time, binned (``ROUND(score, 3)``): ``(time bucket, outcome, error_type,
    score, rows, passed, cost, tokens, sum of scores)``, ``passed`` counting the scores within
    ``(low, high)``; ``bucket`` is ``hour``, ``day`` or ``week``."""
    binned = q.dialect.rounded.format(x="score")
    clause, params = filtered(q, f, extra=["scorer_id = ?"])
    groups = f"{q.dialect.times[bucket]}, outcome, error_type, {binned}"
    rows = q.rows(
        f"SELECT {groups}, COUNT(*), SUM(CASE WHEN score >= ? AND score <= ? THEN 1 ELSE 0 END), "
        "SUM(cost_usd), COALESCE(SUM(prompt_tokens), 0) + COALESCE(SUM(completion_tokens), 0), "
        f"COALESCE(SUM(score), 0) FROM {q.tables.scores}{clause} GROUP BY {groups}",
        [*bounds, scorer, *params],
    )
    return [
        (str(k), o, e, float_or_none(b), int(n), int(p or 0), float_or_none(c), int(t or 0), float(s))
        for k, o, e, b, n, p, c, t, s in rows
    ]


def by_entity(q: Reading, scorer: str, f: ScoreFilter) -> list[tuple[str | None, int, float, int, int]]:
    """``(entity, rows, sum of scores, scores, failures)`` of one scorer's rows."""
    clause, params = filtered(q, f, extra=["scorer_id = ?"])
    rows = q.rows(
        "SELECT entity, COUNT(*), COALESCE(SUM(score), 0), COUNT(score), "
        f"SUM(CASE WHEN outcome = 'failed' THEN 1 ELSE 0 END) FROM {q.tables.scores}{clause} GROUP BY entity",
        [scorer, *params],
    )
    return [(e, int(n), float(t), int(k), int(x or 0)) for e, n, t, k, x in rows]


def by_version_and_models(
    q: Reading, scorer: str, f: ScoreFilter
) -> list[tuple[str | None, str | None, int, float, int, int]]:
    """``(scorer version, agent models, rows, sum of scores, scores, failures)`` of one scorer: one
    grouped scan of its rows, each with its run's models (what the rollup does not keep)."""
    clause, params = filtered(q, f, alias="s.", extra=["s.scorer_id = ?"])
    rows = q.rows(
        "SELECT s.scorer_version, r.models, COUNT(*), COALESCE(SUM(s.score), 0), COUNT(s.score), "
        "SUM(CASE WHEN s.outcome = 'failed' THEN 1 ELSE 0 END) "
        f"FROM {q.tables.scores} s LEFT JOIN {q.tables.runs} r ON r.run_id = s.run_id{clause} "
        "GROUP BY 1, 2",
        [scorer, *params],
    )
    return [(v, _key(m), int(n), float(t), int(k), int(x or 0)) for v, m, n, t, k, x in rows]


def version_passes(
    q: Reading, scorer: str, f: ScoreFilter, bounds: tuple[float, float]
) -> list[tuple[str | None, int, int, int, Any]]:
    """Per version of one scorer under ``f``: ``(scorer_version, scores, errored records, scores within
    (low, high), newest created_at)``; skipped records are neither (the shape of
    ``_labels.version_pass_counts``, under the viewer's filters)."""
    clause, params = filtered(q, f, extra=["scorer_id = ?", "outcome <> 'skipped'"])
    rows = q.rows(
        "SELECT scorer_version, COUNT(score), COUNT(*) - COUNT(score), "
        "SUM(CASE WHEN score >= ? AND score <= ? THEN 1 ELSE 0 END), MAX(created_at) "
        f"FROM {q.tables.scores}{clause} GROUP BY scorer_version",
        [*bounds, scorer, *params],
    )
    return [(v, int(n), int(e), int(p or 0), newest) for v, n, e, p, newest in rows]


def version_starts(q: Reading) -> list[tuple[str, str | None, str]]:
    """``(scorer_id, scorer_version, first created_at)`` of each version of each scorer: when the store
    first holds a record of it (ISO text, UTC), from the versions table (``_versions``)."""
    rows = q.rows(f"SELECT scorer_id, scorer_version, first_at FROM {q.tables.versions}")
    return [(str(s), v or None, str(_text(first))) for s, v, first in rows]


# -- runs ------------------------------------------------------------------------------------------------


def score_rows(
    q: Reading,
    f: ScoreFilter,
    *,
    scorer: str | None,
    outcome: str | None,
    low: float | None,
    high: float | None,
    page: int,
    page_size: int,
) -> list[dict[str, Any]]:
    """Page ``page`` (``page_size`` rows, and one more if there is a next page) of the score rows under
    ``f``, worst first (lowest score; failed and skipped rows after the scored), each with its run's
    input."""
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
    clause, params = filtered(q, f, alias="s.", extra=extra)
    order = "ORDER BY CASE WHEN s.score IS NULL THEN 1 ELSE 0 END, s.score, s.created_at DESC, s.id"
    # The page's rows first, then their runs' inputs (not a join of every matching row).
    rows = q.rows(
        "SELECT s.id, s.created_at, s.run_id, s.scorer_id, s.outcome, s.score, s.reason, s.entity, "
        "s.error_type, s.skip_reason, r.input FROM ("
        "SELECT s.id, s.created_at, s.run_id, s.scorer_id, s.outcome, s.score, s.reason, s.entity, "
        f"s.error_type, s.skip_reason FROM {q.tables.scores} s{clause} {order} "
        f"LIMIT {int(page_size) + 1} OFFSET {max(int(page), 0) * int(page_size)}"
        f") s LEFT JOIN {q.tables.runs} r ON r.run_id = s.run_id {order}",
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


def run_row(q: Reading, run_id: str) -> dict[str, Any] | None:
    """The runs row of ``run_id`` (each of ``RUN_COLUMNS``), ``None`` when it is not stored."""
    rows = q.rows(f"SELECT {', '.join(RUN_COLUMNS)} FROM {q.tables.runs} WHERE run_id = ?", [run_id])
    return dict(zip(RUN_COLUMNS, rows[0], strict=True)) if rows else None


def run_scores(q: Reading, run_id: str) -> list[dict[str, Any]]:
    """Every score record of a run, with each of ``COLUMNS``."""
    rows = q.rows(
        f"SELECT {', '.join(COLUMNS)} FROM {q.tables.scores} WHERE run_id = ? ORDER BY scorer_id, created_at",
        [run_id],
    )
    return [dict(zip(COLUMNS, row, strict=True)) for row in rows]


# -- compare ---------------------------------------------------------------------------------------------


def moments(q: Reading, f: ScoreFilter) -> list[tuple[str, str | None, int, float | None, float | None]]:
    """``(scorer_id, scorer_version, n, sum, sum of squares)`` of the scores under ``f``."""
    clause, params = filtered(q, f, extra=["score IS NOT NULL"])
    rows = q.rows(
        f"SELECT scorer_id, scorer_version, COUNT(*), SUM(score), SUM(score * score) "
        f"FROM {q.tables.scores}{clause} GROUP BY scorer_id, scorer_version ORDER BY scorer_id",
        params,
    )
    return [(s, v, int(n), float_or_none(t), float_or_none(sq)) for s, v, n, t, sq in rows]


def item_means(q: Reading, f: ScoreFilter) -> dict[tuple[str, str], tuple[float, str]]:
    """Mean score per (scorer, item), an item being a run's input (its JSON text), with a run id."""
    clause, params = filtered(q, f, alias="s.", extra=["s.score IS NOT NULL"])
    text = q.dialect.json_text.format(c="r.input")
    rows = q.rows(
        f"SELECT s.scorer_id, {text}, AVG(s.score), MIN(s.run_id) "
        f"FROM {q.tables.scores} s JOIN {q.tables.runs} r ON r.run_id = s.run_id{clause} "
        f"GROUP BY s.scorer_id, {text} LIMIT 20000",
        params,
    )
    return {(s, str(i)): (float(m), str(r)) for s, i, m, r in rows if i is not None}


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat() if isinstance(value, datetime) else str(value)


def float_or_none(value: Any) -> float | None:
    """``value`` as a float (a database may give a ``Decimal``), ``None`` as it is."""
    return None if value is None else float(value)


def _key(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else json.dumps(value)
