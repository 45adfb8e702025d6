"""Canary epochs: a pinned set of labelled runs re-judged by a scorer as it is configured now, stored,
and compared with the labels and with the epoch before, so a judge that drifts (a new model behind the
same name, a changed prompt or formula) is noticed.

An epoch's records have ``source="canary"``, the epoch's id as ``eval_id`` and
``metadata["canary_epoch"] = {"id": ..., "at": ...}``. The epoch drifted when its accuracy or kappa
against the labels falls outside the 95% interval the previous epoch had against the same labels.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from agentevals._model._result import ScoreRecord
from agentevals._model._run import Run
from agentevals._model._thresholds import Threshold
from agentevals._scoring._score_stored import score_stored
from agentevals._scoring._scorer import Scorer
from agentevals._store import _label_reads, _labels
from agentevals._store._run_row import run_from_row
from agentevals._store._store import Store
from agentevals._store._view_reads import run_row
from agentevals._support._sync import run_sync
from agentevals._trust._agreement import DEFAULT_THRESHOLD
from agentevals._trust._labels import moment
from agentevals._trust._stats import Confusion, Estimate
from agentevals.sinks._open import store_writer

logger = logging.getLogger("agentevals.canary")

Metric = Literal["accuracy", "kappa"]
#: Run ids an alert or a warning lists at most.
RUNS_LISTED = 20
#: How far outside an interval a value computed in floating point may fall and still be inside.
ROUNDING = 1e-9


@dataclass(frozen=True)
class EpochAgreement:
    """One canary epoch against the labels: ``scored`` runs judged with a score, ``unscored`` ones that
    failed or were skipped; the labels paired with the scored runs (``n``, one pair per label) counted
    in ``confusion``, with ``accuracy`` and ``kappa``; ``disagreeing``: the runs a label puts on the
    other side of the threshold."""

    epoch_id: str
    at: datetime
    version: str | None
    scored: int
    unscored: int
    n: int
    confusion: Confusion
    accuracy: Estimate | None
    kappa: Estimate | None
    disagreeing: tuple[str, ...]
    verdicts: Mapping[str, bool | None]

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.epoch_id,
            "at": self.at.isoformat(),
            "scorer_version": self.version,
            "scored": self.scored,
            "unscored": self.unscored,
            "labels": self.n,
            "accuracy": _estimate(self.accuracy),
            "kappa": _estimate(self.kappa),
        }


@dataclass(frozen=True)
class Move:
    """A measure of agreement that left the previous epoch's interval (``after`` ``None``: it is no
    longer defined, e.g. no run was scored)."""

    metric: Metric
    before: Estimate
    after: Estimate | None

    def __str__(self) -> str:
        return f"{self.metric} {self.before} -> {self.after if self.after is not None else 'none'}"


@dataclass(frozen=True)
class CanaryEpoch:
    """What one canary epoch found: the ``epoch`` and the ``previous`` one (``None`` for the first),
    against the labels of ``scorer`` with ``threshold``; ``moved``: the measures that left the previous
    interval (the epoch drifted when there is one); ``changed``: runs whose verdict changed since the
    previous epoch; ``missing``: pinned runs the store does not hold."""

    scorer: str
    threshold: Threshold
    epoch: EpochAgreement
    previous: EpochAgreement | None
    moved: tuple[Move, ...]
    changed: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def drifted(self) -> bool:
        return bool(self.moved)

    def summary(self) -> str:
        """One line: the epoch's agreement, and the previous epoch's."""
        e = self.epoch
        line = (
            f"canary {e.epoch_id}: {self.scorer} (version {e.version}) judged {e.scored + e.unscored} runs "
            f"({e.unscored} failed or skipped), threshold {self.threshold}: {_measures(e)}"
        )
        if self.previous is None:
            return line + "; the first epoch, kept as the baseline"
        verdict = "drift" if self.drifted else "no drift"
        return line + f"; previous {self.previous.epoch_id}: {_measures(self.previous)}; {verdict}"

    def warning(self) -> str:
        """The warning of a drifted epoch: what moved, from what to what, and the runs that disagree."""
        moved = ", ".join(map(str, self.moved))
        text = f"agentevals canary: {self.scorer} drifted in epoch {self.epoch.epoch_id}: {moved}"
        text += f"; runs that disagree with the labels now: {_listed(self.epoch.disagreeing)}"
        return text + f"; runs whose verdict changed: {_listed(self.changed)}"

    def alert(self, store: str) -> dict[str, Any]:
        """The JSON alert a webhook gets (its keys are stable)."""
        return {
            "event": "agentevals.canary.drift",
            "store": store,
            "scorer": self.scorer,
            "threshold": {"min": self.threshold.min, "max": self.threshold.max},
            "epoch": self.epoch.as_dict(),
            "previous_epoch": None if self.previous is None else self.previous.as_dict(),
            "moved": [
                {"metric": m.metric, "from": _estimate(m.before), "to": _estimate(m.after)}
                for m in self.moved
            ],
            "disagreeing_runs": list(self.epoch.disagreeing[:RUNS_LISTED]),
            "changed_runs": list(self.changed[:RUNS_LISTED]),
            "missing_runs": list(self.missing[:RUNS_LISTED]),
        }


def run_canary(
    store: Store, scorer: Scorer, *, runs: Sequence[str] | None = None, concurrency: int = 8
) -> CanaryEpoch:
    """Judge the pinned runs (``runs``, else the runs labelled ``scorer.id``) with ``scorer``, store the
    records in ``store`` as a new canary epoch, and compare it with the labels and the previous epoch;
    logs one WARNING when it drifted. ``ValueError`` when there is nothing to judge."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency is a number of scorer calls at once, 1 or more; got {concurrency!r}")
    q = store.reading
    threshold = _label_reads.stored_thresholds(q).get(scorer.id, DEFAULT_THRESHOLD)
    labels = _label_passes(_labels.label_rows(q, run_id=None, name=scorer.id), threshold)
    pinned = list(dict.fromkeys(runs if runs is not None else labels))
    if not pinned:
        raise ValueError(
            f"no runs to judge: nobody labelled a run {scorer.id!r}; label some (agentevals label, "
            "agentevals labels import) or name the runs to pin (--runs FILE)"
        )
    previous_id = _label_reads.latest_canary_epoch(q, scorer.id)
    stored, missing = _stored_runs(store, pinned)
    if not stored:
        raise ValueError(f"none of the {len(pinned)} pinned runs is stored in {store.display}")
    epoch_id, at = new_epoch()
    records = run_sync(_judge_and_store(store, scorer, stored, epoch_id, at, concurrency))
    epoch = epoch_agreement(epoch_id, at, _verdicts(records, threshold), labels, _version(records))
    previous = None
    if previous_id is not None:
        previous = _stored_epoch(store, scorer.id, previous_id, set(pinned), threshold, labels)
    found = CanaryEpoch(
        scorer=scorer.id,
        threshold=threshold,
        epoch=epoch,
        previous=previous,
        moved=() if previous is None else moves(previous, epoch),
        changed=() if previous is None else changed_runs(previous.verdicts, epoch.verdicts),
        missing=tuple(missing),
    )
    if found.drifted:
        logger.warning(found.warning())
    return found


def new_epoch() -> tuple[str, datetime]:
    """A new epoch's id (its time, then a random suffix) and time."""
    at = datetime.now(UTC)
    return f"canary-{at:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}", at


def epoch_agreement(
    epoch_id: str,
    at: datetime,
    verdicts: Mapping[str, bool | None],
    labels: Mapping[str, Sequence[bool]],
    version: str | None,
) -> EpochAgreement:
    """An epoch's judge ``verdicts`` per run (``None``: not scored) against the people's ``labels``
    (each label a pass or a fail)."""
    pairs = [
        (judge, human)
        for run_id, judge in verdicts.items()
        if judge is not None
        for human in labels.get(run_id, ())
    ]
    confusion = Confusion.of(pairs)
    disagreeing = sorted(
        run_id
        for run_id, judge in verdicts.items()
        if judge is not None and any(human != judge for human in labels.get(run_id, ()))
    )
    scored = sum(judge is not None for judge in verdicts.values())
    return EpochAgreement(
        epoch_id=epoch_id,
        at=at,
        version=version,
        scored=scored,
        unscored=len(verdicts) - scored,
        n=confusion.n,
        confusion=confusion,
        accuracy=confusion.accuracy(),
        kappa=confusion.kappa(),
        disagreeing=tuple(disagreeing),
        verdicts=dict(verdicts),
    )


def moves(previous: EpochAgreement, epoch: EpochAgreement) -> tuple[Move, ...]:
    """The measures of ``epoch`` outside the interval ``previous`` had (one undefined now, though
    defined before, has moved too)."""
    measures: tuple[tuple[Metric, Estimate | None, Estimate | None], ...] = (
        ("accuracy", previous.accuracy, epoch.accuracy),
        ("kappa", previous.kappa, epoch.kappa),
    )
    return tuple(
        Move(metric, before, after)
        for metric, before, after in measures
        if before is not None and (after is None or not _inside(after.value, before))
    )


def _inside(value: float, interval: Estimate) -> bool:
    """Whether ``value`` is in ``interval``, bounds computed in floating point included (a perfect
    agreement's Wilson interval ends at 0.9999999999999999)."""
    return interval.low - ROUNDING <= value <= interval.high + ROUNDING


def changed_runs(before: Mapping[str, bool | None], after: Mapping[str, bool | None]) -> tuple[str, ...]:
    """The runs judged in both epochs whose verdict (pass, fail or none) differs."""
    return tuple(
        sorted(run_id for run_id, verdict in after.items() if run_id in before and before[run_id] != verdict)
    )


def _stored_epoch(
    store: Store,
    scorer_id: str,
    epoch_id: str,
    pinned: set[str],
    threshold: Threshold,
    labels: Mapping[str, Sequence[bool]],
) -> EpochAgreement:
    """A stored epoch's records of the ``pinned`` runs against today's ``labels``: a change between
    two epochs is then the judge's, not the labels'."""
    rows = [row for row in _label_reads.epoch_records(store.reading, scorer_id, epoch_id) if row[0] in pinned]
    verdicts = {
        run_id: threshold.check(float(score)) if outcome == "scored" and score is not None else None
        for run_id, _, outcome, score, _ in rows
    }
    when = min((moment(row[4]) for row in rows), default=datetime.now(UTC))
    return epoch_agreement(epoch_id, when, verdicts, labels, rows[0][1] if rows else None)


def _label_passes(rows: Iterable[tuple[Any, ...]], threshold: Threshold) -> dict[str, list[bool]]:
    """Per run, in the order of its first label, whether each label passes it: a pass/fail label is its
    verdict, a score label passes when it meets ``threshold`` (as the agreement report reads them)."""
    passes: dict[str, list[bool]] = {}
    for _, run_id, _, value, kind, *_ in rows:
        passes.setdefault(run_id, []).append(value >= 0.5 if kind == "pass_fail" else threshold.check(value))
    return passes


def _stored_runs(store: Store, run_ids: Sequence[str]) -> tuple[list[Run], list[str]]:
    """The stored runs of ``run_ids``, and the ids the store does not hold."""
    found, missing = [], []
    for run_id in run_ids:
        row = run_row(store.reading, run_id)
        if row is None:
            missing.append(run_id)
        else:
            found.append(run_from_row(row, json_as_text=store.dialect.json_as_text))
    return found, missing


async def _judge_and_store(
    store: Store, scorer: Scorer, runs: Sequence[Run], epoch_id: str, at: datetime, concurrency: int
) -> list[ScoreRecord]:
    """The epoch's records of ``runs``, at most ``concurrency`` scorer calls at once, stored."""
    gate = asyncio.Semaphore(concurrency)
    stamp = {"id": epoch_id, "at": at.isoformat()}

    async def judged(run: Run) -> ScoreRecord:
        async with gate:
            record = await score_stored(
                scorer, run, source="canary", only_succeeded="a canary judges only runs that succeeded"
            )
        return record.model_copy(
            update={"eval_id": epoch_id, "metadata": {**record.metadata, "canary_epoch": stamp}}
        )

    records = list(await asyncio.gather(*(judged(run) for run in runs)))
    sink = store_writer(store)
    try:
        await sink.write(records)
    finally:
        await sink.close()
    return records


def _verdicts(records: Sequence[ScoreRecord], threshold: Threshold) -> dict[str, bool | None]:
    return {r.run_id: None if r.score is None else threshold.check(r.score) for r in records}


def _version(records: Sequence[ScoreRecord]) -> str | None:
    return records[0].scorer_version if records else None


def _measures(epoch: EpochAgreement) -> str:
    accuracy = "none" if epoch.accuracy is None else str(epoch.accuracy)
    kappa = "none" if epoch.kappa is None else str(epoch.kappa)
    return f"accuracy {accuracy}, kappa {kappa} on {epoch.n} labels"


def _estimate(value: Estimate | None) -> dict[str, float] | None:
    return None if value is None else {"value": value.value, "low": value.low, "high": value.high}


def _listed(run_ids: Sequence[str]) -> str:
    if not run_ids:
        return "none"
    more = len(run_ids) - RUNS_LISTED
    return ", ".join(run_ids[:RUNS_LISTED]) + (f" and {more} more" if more > 0 else "")
