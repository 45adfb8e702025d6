"""What the viewer shows from people's labels: each labelled scorer's agreement with them, its pass
counts read under the page's filters and judged by the page's threshold (:func:`agreements`); the
corrected pass rate beside a pass rate (:func:`corrected`); the Agreement page (:func:`agreement_page`);
a run's labels (:func:`run_labels`). The statistics are ``agentevals._trust``'s."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from agentevals._model._thresholds import Threshold
from agentevals._trust._agreement import (
    Agreement,
    ThresholdOrigin,
    VersionAgreement,
    agreement_counted,
    worst_disagreements,
)
from agentevals._trust._labels import Label, moment
from agentevals._trust._stats import Estimate
from agentevals._view._queries import Filters, Reader, Session
from agentevals._view._thresholds import Bound, Origin
from agentevals._view._versions import short

#: Disagreements the Agreement page lists per scorer version, worst first.
DISAGREEMENTS_SHOWN = 50
#: How ``agentevals._trust`` names where a threshold came from.
_ORIGINS: dict[Origin, ThresholdOrigin] = {
    "--pass-threshold": "given",
    "stored": "stored",
    "default": "default",
}


def agreements(
    reader: Reader,
    scorer_ids: Iterable[str],
    f: Filters,
    bound_of: Callable[[str], Bound],
    min_per_class: int,
) -> dict[str, Agreement]:
    """The agreement with people of each of ``scorer_ids`` that has labels, by id: its labels against
    its records judged by ``bound_of(scorer_id)`` (a :class:`Bound`), its pass counts those of its
    records under ``f``. One query when the store holds no labels."""
    with reader.session() as q:
        labelled = sorted(set(q.label_names()) & set(scorer_ids))
    found = reader.parallel(
        [
            partial(_agreement, scorer_id=s, f=f, bound=bound_of(s), min_per_class=min_per_class)
            for s in labelled
        ]
    )
    return dict(zip(labelled, found, strict=True))


def _agreement(q: Session, scorer_id: str, f: Filters, bound: Bound, min_per_class: int) -> Agreement:
    threshold = Threshold(min=bound.low, max=bound.high)
    counts = q.version_passes(scorer_id, f, bound.sql())
    return agreement_counted(
        q.reading, scorer_id, threshold, _ORIGINS[bound.origin], None, min_per_class, counts
    )


@dataclass(frozen=True)
class Corrected:
    """A scorer's newest version (under the page's filters) against people's labels: its judge's pass
    rate of scored records (``raw``, ``passed`` of ``scored``), the labels' own pass rate (``people``,
    of ``labelled`` runs) and the corrected rate (``estimate``), or why there is none (``text``)."""

    version: str | None
    estimate: Estimate | None
    text: str
    raw: float | None
    passed: int
    scored: int
    people: float | None
    labelled: int

    @property
    def short_version(self) -> str:
        return short(self.version)


#: A scorer page's corrected rate when the scorer has no labels.
UNLABELLED = Corrected(None, None, "no labels", None, 0, 0, None, 0)


def corrected(found: Agreement | None) -> Corrected | None:
    """The corrected pass rate of ``found``'s newest version (``None`` without labels or versions)."""
    if found is None or not found.versions:
        return None
    newest: VersionAgreement = found.versions[0]
    return Corrected(
        version=newest.version,
        estimate=None if newest.corrected is None else newest.corrected.estimate,
        text=newest.corrected_text,
        raw=None if newest.raw.rate is None else newest.raw.rate.value,
        passed=newest.raw.passed,
        scored=newest.raw.scored,
        people=None if newest.labels_pass_rate is None else newest.labels_pass_rate.value,
        labelled=newest.n,
    )


def agreement_page(
    reader: Reader, f: Filters, bound_of: Callable[[str], Bound], min_per_class: int
) -> dict[str, Any]:
    """The Agreement page: each labelled scorer's agreement per version (at most
    :data:`DISAGREEMENTS_SHOWN` disagreements each), its pass threshold, and the label names that
    name no scorer of the store."""
    with reader.session() as q:
        names = q.label_names()
        scorer_ids = q.scorers_since(None)
    found = agreements(reader, scorer_ids, f, bound_of, min_per_class)
    return {
        "agreements": [worst_disagreements(a, DISAGREEMENTS_SHOWN) for a in found.values()],
        "totals": {s: [v.confusion.fn + v.confusion.fp for v in a.versions] for s, a in found.items()},
        "bounds": {s: bound_of(s) for s in found},
        "other_names": sorted(set(names) - set(scorer_ids)),
        "labelled": bool(names),
        "min_per_class": min_per_class,
    }


def run_labels(q: Session, run_id: str) -> list[Label]:
    """A run's labels, oldest first."""
    return [
        Label(label_id, run, name, float(value), kind, labeller, note, moment(created_at))
        for label_id, run, name, value, kind, labeller, note, created_at in q.run_labels(run_id)
    ]
