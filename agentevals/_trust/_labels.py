"""People's labels of stored runs: add, list and delete them, and read labelled runs with their scores."""

from __future__ import annotations

import builtins
import math
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal

from agentevals._store import _labels
from agentevals._store._row import TABLE
from agentevals._store._store import Store, open_store
from agentevals._trust._opened import StoreLike, check_labels_kept

LabelKind = Literal["pass_fail", "score"]
ACCEPTED = "a number in [0, 1], True or False, or 'pass' or 'fail'"
"""What a label's value may be."""


def label_value(value: object) -> tuple[float, LabelKind]:
    """A label's stored value and kind: a pass is 1.0 and a fail 0.0 (``pass_fail``), a number in
    [0, 1] is a score (``score``).

    >>> label_value("pass"), label_value(False), label_value(0.25)
    ((1.0, 'pass_fail'), (0.0, 'pass_fail'), (0.25, 'score'))
    """
    if isinstance(value, bool):
        return (1.0 if value else 0.0), "pass_fail"
    if isinstance(value, str) and value.strip().lower() in ("pass", "fail"):
        return (1.0 if value.strip().lower() == "pass" else 0.0), "pass_fail"
    if isinstance(value, int | float) and math.isfinite(value) and 0 <= value <= 1:
        return float(value), "score"
    raise ValueError(f"a label's value is {ACCEPTED}; got {value!r}")


@dataclass(frozen=True)
class Label:
    """One person's label of one run: ``name`` is a scorer id (compared with that scorer's scores) or a
    free name such as ``"helpful"``; ``value`` is in [0, 1], a pass 1.0 and a fail 0.0 (``kind``
    ``"pass_fail"``) or a score (``kind`` ``"score"``)."""

    label_id: str
    run_id: str
    name: str
    value: float
    kind: LabelKind
    labeller: str
    note: str | None
    created_at: datetime

    @classmethod
    def new(
        cls, run_id: str, name: str, value: object, *, labeller: str = "", note: str | None = None
    ) -> Label:
        """A label made now, with a new id; ``ValueError`` saying what is wrong with an argument."""
        for field, given in (("run_id", run_id), ("name", name)):
            if not isinstance(given, str) or not given.strip():
                raise ValueError(f"a label's {field} is a non-empty string; got {given!r}")
        if not isinstance(labeller, str):
            raise ValueError(f"a label's labeller is a string (who labelled the run); got {labeller!r}")
        if note is not None and not isinstance(note, str):
            raise ValueError(f"a label's note is a string or None; got {note!r}")
        number, kind = label_value(value)
        return cls(uuid.uuid4().hex, run_id, name, number, kind, labeller, note, datetime.now(UTC))

    @property
    def verdict(self) -> str:
        """``"pass"`` or ``"fail"`` for a pass/fail label, else the score as text (as ``export`` writes)."""
        if self.kind == "pass_fail":
            return "pass" if self.value >= 0.5 else "fail"
        return f"{self.value:g}"


@dataclass(frozen=True)
class StoredRecord:
    """A score record of a labelled run, as the store holds it."""

    scorer_version: str | None
    outcome: str
    score: float | None
    reason: str | None
    created_at: datetime


@dataclass(frozen=True)
class LabelledRun:
    """A labelled run: its labels of one name, oldest first, and that scorer's records of it, oldest
    first (none while it is not scored)."""

    run_id: str
    labels: tuple[Label, ...]
    records: tuple[StoredRecord, ...]


class Labels:
    """The labels of a SQLite or PostgreSQL store (``store``: its address, or an open store, left open).

    Labels are added, never replaced: several people may label one run, before or after it is scored.
    A ``.jsonl`` store keeps no labels (``ValueError``). Close it with :meth:`close` or a ``with`` block.

    >>> import pathlib, tempfile
    >>> from agentevals.sinks import SQLiteSink
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "scores.db"
    >>> SQLiteSink(path).check()
    >>> with Labels(path) as labels:
    ...     label = labels.add("run-1", "helpfulness", "fail", labeller="ann", note="ignores the question")
    ...     [(found.run_id, found.value, found.kind) for found in labels.list(name="helpfulness")]
    [('run-1', 0.0, 'pass_fail')]
    """

    def __init__(self, store: StoreLike, *, table: str = TABLE) -> None:
        if isinstance(store, Store):
            check_labels_kept(store.address)
            self._store, self._owned = store, False
        else:
            check_labels_kept(store)
            self._store, self._owned = open_store(store, table=table), True

    def add(
        self,
        run_id: str,
        name: str,
        value: float | bool | str,
        *,
        labeller: str = "",
        note: str | None = None,
    ) -> Label:
        """Store a label of ``run_id`` and return it. ``value``: a number in [0, 1], ``True``/``False`` or
        ``"pass"``/``"fail"``; anything else is a ``ValueError`` saying what is accepted."""
        label = Label.new(run_id, name, value, labeller=labeller, note=note)
        self.add_all([label])
        return label

    def add_all(self, labels: Iterable[Label]) -> None:
        """Store ``labels`` (made with :meth:`Label.new`) in one transaction: all of them or none."""
        q = self._store.reading
        rows = [
            (
                label.label_id,
                label.run_id,
                label.name,
                label.value,
                label.kind,
                label.labeller,
                label.note,
                q.dialect.timestamp(label.created_at),
            )
            for label in labels
        ]
        if rows:
            _labels.insert_labels(q, rows)

    def list(self, *, run_id: str | None = None, name: str | None = None) -> builtins.list[Label]:
        """The labels (of ``run_id`` / named ``name`` when given), oldest first."""
        return [_label(row) for row in _labels.label_rows(self._store.reading, run_id=run_id, name=name)]

    def delete(self, label_id: str) -> bool:
        """Delete the label ``label_id``; ``False`` when there is none."""
        return _labels.delete_label(self._store.reading, label_id)

    def runs(self, name: str, *, scorer_version: str | None = None) -> Iterator[LabelledRun]:
        """The runs labelled ``name``, in the order of their first label, each with its labels of that
        name and the records of scorer ``name`` (at ``scorer_version`` when given)."""
        q = self._store.reading
        records: dict[str, builtins.list[StoredRecord]] = defaultdict(builtins.list)
        for run_id, *fields in _labels.labelled_records(q, name, scorer_version):
            records[run_id].append(_record(fields))
        labelled: dict[str, builtins.list[Label]] = defaultdict(builtins.list)
        for row in _labels.label_rows(q, run_id=None, name=name):
            label = _label(row)
            labelled[label.run_id].append(label)
        for run_id, labels in labelled.items():
            yield LabelledRun(run_id, tuple(labels), tuple(records.get(run_id, ())))

    def close(self) -> None:
        """Close the store when this object opened it."""
        if self._owned:
            self._store.close()

    def __enter__(self) -> Labels:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def moment(value: Any) -> datetime:
    """A stored ``created_at`` (ISO text in SQLite, a datetime from PostgreSQL) as an aware UTC datetime."""
    found = datetime.fromisoformat(value) if isinstance(value, str) else value
    return found.replace(tzinfo=UTC) if found.tzinfo is None else found.astimezone(UTC)


def _label(row: tuple[Any, ...]) -> Label:
    label_id, run_id, name, value, kind, labeller, note, created_at = row
    return Label(label_id, run_id, name, float(value), kind, labeller, note, moment(created_at))


def _record(fields: builtins.list[Any]) -> StoredRecord:
    version, outcome, score, reason, created_at = fields
    return StoredRecord(version, outcome, score, reason, moment(created_at))
