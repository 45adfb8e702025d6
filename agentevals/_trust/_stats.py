"""The statistics of agreement between a judge and people: intervals for proportions and Cohen's kappa,
numeric agreement, and the pass rate corrected for the judge's measured error.

Pure functions over counts and paired values; nothing here reads a store.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""


@dataclass(frozen=True)
class Estimate:
    """A value with its 95% interval."""

    value: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"


def wilson(successes: int, n: int) -> Estimate | None:
    """The share ``successes / n`` with its Wilson score interval (``None`` when ``n`` is 0).

    >>> print(wilson(8, 10))
    0.800 [0.490, 0.943]
    """
    if n <= 0:
        return None
    share = successes / n
    z2 = Z95 * Z95
    centre = (share + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return Estimate(share, max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class Confusion:
    """Judge verdicts against people's, counted. A "positive" is a run people passed.

    ``tp``: both passed; ``fn``: people passed, the judge failed; ``fp``: people failed, the judge
    passed; ``tn``: both failed.
    """

    tp: int = 0
    fn: int = 0
    fp: int = 0
    tn: int = 0

    @classmethod
    def of(cls, pairs: Sequence[tuple[bool, bool]]) -> Confusion:
        """Count ``(judge_passed, human_passed)`` pairs."""
        tp = fn = fp = tn = 0
        for judge, human in pairs:
            if human:
                tp, fn = (tp + 1, fn) if judge else (tp, fn + 1)
            else:
                fp, tn = (fp + 1, tn) if judge else (fp, tn + 1)
        return cls(tp, fn, fp, tn)

    @property
    def n(self) -> int:
        return self.tp + self.fn + self.fp + self.tn

    @property
    def positives(self) -> int:
        """Runs people passed."""
        return self.tp + self.fn

    @property
    def negatives(self) -> int:
        """Runs people failed."""
        return self.fp + self.tn

    def accuracy(self) -> Estimate | None:
        return wilson(self.tp + self.tn, self.n)

    def tpr(self) -> Estimate | None:
        """Of the runs people passed, the share the judge passed (sensitivity)."""
        return wilson(self.tp, self.positives)

    def tnr(self) -> Estimate | None:
        """Of the runs people failed, the share the judge failed (specificity)."""
        return wilson(self.tn, self.negatives)

    def kappa(self) -> Estimate | None:
        """Cohen's kappa with the large-sample interval of Fleiss, Cohen and Everitt (1969); ``None``
        when it is undefined (no labels, or judge and people each put every run in one class)."""
        n = self.n
        if n == 0:
            return None
        cells = ((self.tp / n, self.fn / n), (self.fp / n, self.tn / n))  # [human][judge]
        human = (cells[0][0] + cells[0][1], cells[1][0] + cells[1][1])
        judge = (cells[0][0] + cells[1][0], cells[0][1] + cells[1][1])
        observed = cells[0][0] + cells[1][1]
        chance = human[0] * judge[0] + human[1] * judge[1]
        if chance >= 1.0:
            return None
        kappa = (observed - chance) / (1 - chance)
        diagonal = sum(cells[i][i] * (1 - (human[i] + judge[i]) * (1 - kappa)) ** 2 for i in (0, 1))
        off = (1 - kappa) ** 2 * sum(
            cells[i][j] * (judge[i] + human[j]) ** 2 for i in (0, 1) for j in (0, 1) if i != j
        )
        variance = max(0.0, diagonal + off - (kappa - chance * (1 - kappa)) ** 2) / (n * (1 - chance) ** 2)
        half = Z95 * math.sqrt(variance)
        return Estimate(kappa, max(-1.0, kappa - half), min(1.0, kappa + half))


@dataclass(frozen=True)
class NumericAgreement:
    """Judge scores against people's numeric labels: mean absolute error and two correlations."""

    n: int
    mae: Estimate
    pearson: Estimate | None  # None when either side is constant
    spearman: Estimate | None


def numeric_agreement(judge: Sequence[float], human: Sequence[float]) -> NumericAgreement | None:
    """MAE (normal interval), Pearson's r and Spearman's rho (Fisher-z intervals; Spearman's with the
    Fieller-Hartley-Pearson variance); ``None`` under 4 pairs.

    >>> found = numeric_agreement([0.1, 0.4, 0.35, 0.8, 0.9], [0.0, 0.5, 0.3, 0.7, 1.0])
    >>> round(found.mae.value, 3), round(found.pearson.value, 3), found.spearman.value
    (0.09, 0.968, 1.0)
    """
    if len(judge) != len(human):
        raise ValueError(f"{len(judge)} judge scores against {len(human)} labels: pair them one to one")
    n = len(judge)
    if n < 4:
        return None
    errors = [abs(a - b) for a, b in zip(judge, human, strict=True)]
    mae = sum(errors) / n
    spread = math.sqrt(sum((e - mae) ** 2 for e in errors) / (n - 1))
    half = Z95 * spread / math.sqrt(n)
    return NumericAgreement(
        n=n,
        mae=Estimate(mae, max(0.0, mae - half), mae + half),
        pearson=_correlation(judge, human, 1.0),
        spearman=_correlation(_ranks(judge), _ranks(human), 1.06),
    )


def _correlation(xs: Sequence[float], ys: Sequence[float], variance_factor: float) -> Estimate | None:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    r = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / math.sqrt(sxx * syy)
    r = max(-1.0, min(1.0, r))
    if abs(r) == 1.0:
        return Estimate(r, r, r)
    z = math.atanh(r)
    half = Z95 * math.sqrt(variance_factor / (n - 3))
    return Estimate(r, math.tanh(z - half), math.tanh(z + half))


def _ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, ties given their average rank."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for i in range(start, end + 1):
            ranks[order[i]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


@dataclass(frozen=True)
class CorrectedRate:
    """A pass rate corrected for the judge's error, or the reason there is none (``estimate`` is
    ``None`` and ``refused`` says why)."""

    raw: float
    estimate: Estimate | None
    refused: str | None = None


MIN_LABELS_PER_CLASS = 30
"""Labels needed of each class (runs people passed, runs they failed) before a rate is corrected."""

BETTER_THAN_CHANCE_Z = 3.090232306167813
"""The one-sided 99.9% normal quantile: TPR + TNR - 1 must exceed this many standard errors."""


def corrected_pass_rate(
    passed: int, judged: int, confusion: Confusion, *, min_per_class: int = MIN_LABELS_PER_CLASS
) -> CorrectedRate:
    """The share of runs that truly pass, from the judge's pass rate ``passed / judged`` and its
    measured TPR and TNR: theta = (p + TNR - 1) / (TPR + TNR - 1), clipped to [0, 1].

    The interval comes from the delta method over the three binomial estimates (TPR and TNR with
    Agresti-Coull's added successes in their variances, so a perfect record on few labels still
    counts as uncertain). Refused, with the reason, when either class has fewer than ``min_per_class``
    labels or the judge is not measurably better than chance (TPR + TNR - 1 is not above zero by
    :data:`BETTER_THAN_CHANCE_Z` standard errors).

    >>> rate = corrected_pass_rate(600, 1000, Confusion(tp=85, fn=15, fp=10, tn=90))
    >>> rate.raw, str(rate.estimate)
    (0.6, '0.667 [0.586, 0.748]')
    """
    if judged <= 0:
        raise ValueError("a corrected pass rate needs at least one judged run")
    raw = passed / judged
    if confusion.positives < min_per_class or confusion.negatives < min_per_class:
        return CorrectedRate(
            raw,
            None,
            f"too few labels: {confusion.positives} passing and {confusion.negatives} failing, "
            f"{min_per_class} of each are needed",
        )
    tpr = confusion.tp / confusion.positives
    tnr = confusion.tn / confusion.negatives
    youden = tpr + tnr - 1
    tpr_var = _adjusted_variance(confusion.tp, confusion.positives)
    tnr_var = _adjusted_variance(confusion.tn, confusion.negatives)
    if youden - BETTER_THAN_CHANCE_Z * math.sqrt(tpr_var + tnr_var) <= 0:
        return CorrectedRate(
            raw,
            None,
            f"the judge is not measurably better than chance on the labels (TPR {tpr:.2f} + TNR "
            f"{tnr:.2f} - 1 = {youden:.2f})",
        )
    theta = (raw + tnr - 1) / youden
    variance = (raw * (1 - raw) / judged + theta**2 * tpr_var + (1 - theta) ** 2 * tnr_var) / youden**2
    half = Z95 * math.sqrt(variance)
    return CorrectedRate(raw, Estimate(_unit(theta), _unit(theta - half), _unit(theta + half)))


def _unit(value: float) -> float:
    return min(1.0, max(0.0, value))


def _adjusted_variance(successes: int, n: int) -> float:
    share = (successes + 2) / (n + 4)
    return share * (1 - share) / n
