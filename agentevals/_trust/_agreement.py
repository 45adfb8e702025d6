"""How far a scorer agrees with people's labels, per scorer version, and its pass rate corrected for
the error the labels measure."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from agentevals._model._thresholds import Threshold
from agentevals._store import _labels
from agentevals._store._label_reads import stored_thresholds
from agentevals._store._reading import Reading
from agentevals._store._row import TABLE
from agentevals._trust._labels import LabelKind
from agentevals._trust._opened import StoreLike, opened
from agentevals._trust._stats import (
    MIN_LABELS_PER_CLASS,
    Confusion,
    CorrectedRate,
    Estimate,
    NumericAgreement,
    corrected_pass_rate,
    numeric_agreement,
    wilson,
)

DEFAULT_THRESHOLD = Threshold(min=0.5)
"""The pass threshold of a scorer the store keeps none for."""
DISAGREEMENTS_LISTED = 10
"""Disagreements a report lists per scorer version, worst first (``fn + fp`` counts them all)."""

ThresholdOrigin = Literal["given", "stored", "default"]


@dataclass(frozen=True)
class Disagreement:
    """A labelled run the judge and a person put on different sides of the threshold: the judge's
    ``score``, the person's ``label`` value and how far apart they are (``gap``)."""

    run_id: str
    score: float
    label: float
    kind: LabelKind
    labeller: str
    gap: float


@dataclass(frozen=True)
class PassCounts:
    """A version's judged records: those with a score (``scored``), of which ``passed`` met the
    threshold, and the errored ones (no verdict, left out of ``rate``: ``passed / scored``)."""

    scored: int
    errored: int
    passed: int
    rate: Estimate | None


@dataclass(frozen=True)
class VersionAgreement:
    """One scorer version against the labels of the runs it scored.

    Each label is one pair with the version's latest scored record of its run (two people's labels of
    one run are two pairs). ``confusion`` counts judge verdicts against people's (a positive is a run
    people passed); ``numeric`` compares scores with the labels of kind ``score`` (``None`` without
    four of them); ``disagreements`` are worst first (largest gap). ``raw`` is the pass rate of all
    the version's scored records, and ``corrected`` that rate corrected for the error the labels
    measure (``None`` without a scored record; its ``refused`` says why there is no number).
    """

    version: str | None
    n: int
    confusion: Confusion
    accuracy: Estimate | None
    tpr: Estimate | None
    tnr: Estimate | None
    kappa: Estimate | None
    numeric: NumericAgreement | None
    labels_pass_rate: Estimate | None
    raw: PassCounts
    corrected: CorrectedRate | None
    disagreements: tuple[Disagreement, ...]
    min_per_class: int

    @property
    def corrected_text(self) -> str:
        """The corrected rate with its interval, or in a few words why there is none."""
        if self.corrected is None:
            return "no scored records"
        if self.corrected.estimate is not None:
            return str(self.corrected.estimate)
        c = self.confusion
        if c.positives < self.min_per_class or c.negatives < self.min_per_class:
            return (
                f"too few labels ({c.positives} passing, {c.negatives} failing; "
                f"{self.min_per_class} of each needed)"
            )
        return "judge not measurably better than chance"


@dataclass(frozen=True)
class Agreement:
    """A scorer against the labels named after it: one :class:`VersionAgreement` per version, newest
    first (by its latest record). ``threshold`` decides pass and fail for the scorer's scores and for
    labels of kind ``score`` (``threshold_origin``: ``"given"``, ``"stored"`` for the scorer's stored
    threshold, or ``"default"``: 0.5); ``labels`` counts the scorer's labels, ``unmatched`` those
    without a scored record of their run to compare with (not scored yet, or failed)."""

    scorer: str
    threshold: Threshold
    threshold_origin: ThresholdOrigin
    min_per_class: int
    labels: int
    unmatched: int
    versions: tuple[VersionAgreement, ...]


def agreement(
    store: StoreLike,
    scorer: str,
    *,
    version: str | None = None,
    threshold: Threshold | float | Mapping[str, float] | None = None,
    min_per_class: int = MIN_LABELS_PER_CLASS,
    since: datetime | None = None,
    source: str | None = None,
    table: str = TABLE,
) -> Agreement:
    """How scorer ``scorer`` (at ``version``, else each of its versions) agrees with the labels named
    ``scorer`` in ``store`` (an address or an open store; SQLite or PostgreSQL), and its corrected pass
    rate: the rate is corrected once each class has ``min_per_class`` labels. ``threshold`` (a minimum,
    or ``{"min": .., "max": ..}``) replaces the scorer's stored one; ``since`` / ``source`` limit the
    records the pass rates count (the labels' pairs are never limited: the judge's error belongs to its
    version, not to a period).

    >>> import asyncio, pathlib, tempfile
    >>> from agentevals import ScoreResult
    >>> from agentevals.evals import Labels
    >>> from agentevals.sinks import SQLiteSink
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "scores.db"
    >>> async def store() -> None:
    ...     sink = SQLiteSink(path)
    ...     await sink.write([ScoreResult(scorer_id="helpfulness", scorer_name="Helpfulness", run_id=f"r{n}",
    ...                                   scorer_version="v1", score=n / 4) for n in range(5)])
    ...     await sink.close()
    >>> asyncio.run(store())
    >>> with Labels(path) as labels:
    ...     for n, verdict in enumerate(["fail", "fail", "pass", "fail", "pass"]):
    ...         _ = labels.add(f"r{n}", "helpfulness", verdict, labeller="ann")
    >>> found = agreement(path, "helpfulness")
    >>> v1 = found.versions[0]
    >>> v1.n, v1.confusion, [(d.run_id, d.score, d.label) for d in v1.disagreements]
    (5, Confusion(tp=2, fn=0, fp=1, tn=2), [('r3', 0.75, 0.0)])
    >>> v1.corrected_text
    'too few labels (2 passing, 3 failing; 30 of each needed)'
    >>> agreement(path, "helpfulness", threshold=0.2).versions[0].confusion
    Confusion(tp=2, fn=0, fp=2, tn=1)
    """
    if isinstance(min_per_class, bool) or not isinstance(min_per_class, int) or min_per_class < 1:
        raise ValueError(f"min_per_class is a number of labels, 1 or more; got {min_per_class!r}")
    given = None if threshold is None else Threshold.of(threshold)
    with opened(store, table=table, read_only=True) as found:
        return agreement_of(found.reading, scorer, given, version, min_per_class, since, source)


def agreement_of(
    q: Reading,
    scorer: str,
    threshold: Threshold | None,
    version: str | None,
    min_per_class: int,
    since: datetime | None,
    source: str | None,
) -> Agreement:
    """:func:`agreement` on an open reading (``threshold``: ``None`` for the stored one)."""
    origin: ThresholdOrigin = "given"
    chosen = threshold
    if chosen is None:
        chosen, origin = _stored_threshold(q, scorer)
    counts = _labels.version_pass_counts(q, scorer, chosen, version=version, since=since, source=source)
    return agreement_counted(q, scorer, chosen, origin, version, min_per_class, counts)


def agreement_counted(
    q: Reading,
    scorer: str,
    threshold: Threshold,
    origin: ThresholdOrigin,
    version: str | None,
    min_per_class: int,
    pass_counts: Iterable[Sequence[Any]],
) -> Agreement:
    """:func:`agreement_of` with each version's pass counts read by the caller (rows as
    ``_labels.version_pass_counts`` gives them: a page counts the records under its own filters)."""
    pairs = _latest_pairs(_labels.label_pairs(q, scorer, version))
    counts = {row[0]: tuple(row[1:]) for row in pass_counts}
    newest = {v: row[3] for v, row in counts.items()}
    versions = sorted(
        set(counts) | {pair.version for pair in pairs},
        key=lambda v: (newest.get(v) is not None, newest.get(v) or "", v or ""),
        reverse=True,
    )
    per_version = tuple(
        _version(
            v,
            [pair for pair in pairs if pair.version == v],
            counts.get(v, (0, 0, 0, None)),
            threshold,
            min_per_class,
        )
        for v in versions
    )
    labels = _labels.count_labels(q, scorer)
    return Agreement(
        scorer=scorer,
        threshold=threshold,
        threshold_origin=origin,
        min_per_class=min_per_class,
        labels=labels,
        unmatched=labels - len({pair.label_id for pair in pairs}),
        versions=per_version,
    )


@dataclass(frozen=True)
class _Pair:
    label_id: str
    run_id: str
    label: float
    kind: LabelKind
    labeller: str
    version: str | None
    score: float
    created_at: Any


def _latest_pairs(rows: list[tuple[Any, ...]]) -> list[_Pair]:
    """One pair per label and version: with the version's latest scored record of the run."""
    latest: dict[tuple[str, str | None], _Pair] = {}
    for row in rows:
        pair = _Pair(row[0], row[1], float(row[2]), row[3], row[4], row[5], float(row[6]), row[7])
        key = (pair.label_id, pair.version)
        if key not in latest or pair.created_at > latest[key].created_at:
            latest[key] = pair
    return sorted(latest.values(), key=lambda pair: (pair.run_id, pair.label_id))


def _version(
    version: str | None,
    pairs: list[_Pair],
    counts: tuple[Any, ...],
    threshold: Threshold,
    min_per_class: int,
) -> VersionAgreement:
    verdicts = [(threshold.check(p.score), _label_passed(p, threshold)) for p in pairs]
    confusion = Confusion.of(verdicts)
    scored, errored, passed = int(counts[0]), int(counts[1]), int(counts[2] or 0)
    numeric_pairs = [p for p in pairs if p.kind == "score"]
    disagreements = sorted(
        (
            Disagreement(p.run_id, p.score, p.label, p.kind, p.labeller, abs(p.score - p.label))
            for p, (judge, human) in zip(pairs, verdicts, strict=True)
            if judge != human
        ),
        key=lambda d: (-d.gap, d.run_id, d.labeller),
    )
    return VersionAgreement(
        version=version,
        n=confusion.n,
        confusion=confusion,
        accuracy=confusion.accuracy(),
        tpr=confusion.tpr(),
        tnr=confusion.tnr(),
        kappa=confusion.kappa(),
        numeric=numeric_agreement([p.score for p in numeric_pairs], [p.label for p in numeric_pairs]),
        labels_pass_rate=wilson(confusion.positives, confusion.n),
        raw=PassCounts(scored, errored, passed, wilson(passed, scored)),
        corrected=corrected_pass_rate(passed, scored, confusion, min_per_class=min_per_class)
        if scored
        else None,
        disagreements=tuple(disagreements),
        min_per_class=min_per_class,
    )


def _label_passed(pair: _Pair, threshold: Threshold) -> bool:
    """A pass/fail label is its verdict (whichever way the threshold points); a score label passes
    when it meets the threshold, as a score would."""
    return pair.label >= 0.5 if pair.kind == "pass_fail" else threshold.check(pair.label)


def _stored_threshold(q: Reading, scorer: str) -> tuple[Threshold, ThresholdOrigin]:
    """The threshold of the scorer's newest declaration in the store, else the default."""
    stored = stored_thresholds(q).get(scorer)
    return (DEFAULT_THRESHOLD, "default") if stored is None else (stored, "stored")


def labelled_agreements(
    q: Reading,
    scorers: Iterable[str],
    threshold_of: Callable[[str], Threshold | None],
    *,
    min_per_class: int,
    since: datetime | None,
    source: str | None,
) -> list[Agreement]:
    """:func:`agreement_of` for each of ``scorers`` that has labels, by id (``threshold_of(scorer)``:
    ``None`` for the stored threshold). None, after one query, when the store holds no labels."""
    labelled = set(_labels.label_names(q))
    return [
        agreement_of(q, scorer, threshold_of(scorer), None, min_per_class, since, source)
        for scorer in sorted(set(scorers) & labelled)
    ]


def worst_disagreements(found: Agreement, limit: int = DISAGREEMENTS_LISTED) -> Agreement:
    """``found`` with the ``limit`` worst disagreements of each version (for a report)."""
    versions = tuple(replace(v, disagreements=v.disagreements[:limit]) for v in found.versions)
    return replace(found, versions=versions)
