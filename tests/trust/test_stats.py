"""Agreement statistics and the corrected pass rate: worked values, and seeded simulations of coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agentevals._trust._stats import (
    Confusion,
    corrected_pass_rate,
    numeric_agreement,
    wilson,
)


def test_wilson_interval_matches_the_published_values() -> None:
    assert str(wilson(8, 10)) == "0.800 [0.490, 0.943]"
    none_of_ten = wilson(0, 10)
    assert none_of_ten is not None
    assert none_of_ten.low == 0.0
    assert none_of_ten.high == pytest.approx(1.959964**2 / (10 + 1.959964**2))  # z²/(n+z²)
    assert wilson(0, 0) is None


def test_confusion_counts_judge_against_people() -> None:
    pairs = [(True, True)] * 3 + [(False, True)] * 2 + [(True, False)] + [(False, False)] * 4
    confusion = Confusion.of(pairs)
    assert (confusion.tp, confusion.fn, confusion.fp, confusion.tn) == (3, 2, 1, 4)
    assert (confusion.positives, confusion.negatives, confusion.n) == (5, 5, 10)
    assert confusion.tpr() is not None and confusion.tpr().value == 0.6  # type: ignore[union-attr]
    assert confusion.tnr() is not None and confusion.tnr().value == 0.8  # type: ignore[union-attr]
    assert confusion.accuracy() is not None and confusion.accuracy().value == 0.7  # type: ignore[union-attr]


def test_kappa_of_a_worked_table() -> None:
    # observed agreement 0.85; people pass half, the judge 45%: chance agreement 0.5; kappa 0.7
    kappa = Confusion(tp=40, fn=10, fp=5, tn=45).kappa()
    assert kappa is not None
    assert kappa.value == pytest.approx(0.7)
    assert kappa.low < 0.7 < kappa.high


def test_kappa_interval_agrees_with_a_bootstrap() -> None:
    confusion = Confusion(tp=70, fn=12, fp=9, tn=29)
    kappa = confusion.kappa()
    assert kappa is not None
    rng = np.random.default_rng(7)
    cells = np.array([confusion.tp, confusion.fn, confusion.fp, confusion.tn]) / confusion.n
    draws = rng.multinomial(confusion.n, cells, size=4000)
    values = [Confusion(*map(int, draw)).kappa() for draw in draws]
    spread = np.std([v.value for v in values if v is not None])
    analytic = (kappa.high - kappa.low) / (2 * 1.959964)
    assert analytic == pytest.approx(spread, rel=0.1)


def test_kappa_is_undefined_when_everything_lands_in_one_class() -> None:
    assert Confusion(tp=12).kappa() is None
    assert Confusion().kappa() is None


def test_numeric_agreement_of_worked_pairs() -> None:
    found = numeric_agreement([0.2, 0.4, 0.6, 0.8], [0.0, 0.5, 0.5, 1.0])
    assert found is not None
    assert found.mae.value == pytest.approx((0.2 + 0.1 + 0.1 + 0.2) / 4)
    assert found.spearman is not None
    # people's ranks 1, 2.5, 2.5, 4 against 1, 2, 3, 4: rho = 4.5 / sqrt(5 * 4.5)
    assert found.spearman.value == pytest.approx(4.5 / math.sqrt(5 * 4.5))
    assert found.pearson is not None
    assert found.pearson.value == pytest.approx(0.3 / math.sqrt(0.2 * 0.5))  # sxy / sqrt(sxx syy)


def test_numeric_agreement_needs_pairs_and_variation() -> None:
    assert numeric_agreement([0.1, 0.2, 0.3], [0.1, 0.2, 0.3]) is None
    constant = numeric_agreement([0.5] * 5, [0.1, 0.4, 0.3, 0.9, 1.0])
    assert constant is not None and constant.pearson is None and constant.spearman is None
    with pytest.raises(ValueError, match="pair them one to one"):
        numeric_agreement([0.1, 0.2], [0.1])


def test_corrected_rate_of_a_worked_case() -> None:
    # p = 0.6, TPR 0.85, TNR 0.9: theta = (0.6 + 0.9 - 1) / (0.85 + 0.9 - 1) = 2/3
    rate = corrected_pass_rate(600, 1000, Confusion(tp=85, fn=15, fp=10, tn=90))
    assert rate.raw == 0.6
    assert rate.estimate is not None
    assert rate.estimate.value == pytest.approx(2 / 3)
    assert rate.estimate.low < 2 / 3 < rate.estimate.high


def test_corrected_rate_is_clipped_to_the_unit_interval() -> None:
    # a raw rate below the judge's false-pass rate (0.2) gives theta = (0.05 + 0.8 - 1) / 0.7 < 0
    low = corrected_pass_rate(50, 1000, Confusion(tp=90, fn=10, fp=20, tn=80))
    assert low.estimate is not None
    assert (low.estimate.value, low.estimate.low) == (0.0, 0.0)
    # one above its TPR (0.9) gives theta = (0.97 + 0.8 - 1) / 0.7 > 1
    high = corrected_pass_rate(970, 1000, Confusion(tp=90, fn=10, fp=20, tn=80))
    assert high.estimate is not None
    assert (high.estimate.value, high.estimate.high) == (1.0, 1.0)
    assert high.estimate.low < 1.0


def test_corrected_rate_refuses_too_few_labels() -> None:
    rate = corrected_pass_rate(600, 1000, Confusion(tp=85, fn=15, fp=5, tn=20))
    assert rate.estimate is None
    assert rate.refused == "too few labels: 100 passing and 25 failing, 30 of each are needed"


def test_corrected_rate_refuses_a_judge_no_better_than_chance() -> None:
    rate = corrected_pass_rate(600, 1000, Confusion(tp=50, fn=50, fp=50, tn=50))
    assert rate.estimate is None
    assert rate.refused is not None and "not measurably better than chance" in rate.refused


def _simulate(
    truth: float, tpr: float, tnr: float, *, labels: int, runs: int, replications: int, seed: int
) -> tuple[float, float, float]:
    """(interval coverage of ``truth``, share refused, raw rate's bias) over seeded replications."""
    rng = np.random.default_rng(seed)
    covered = refused = 0
    raw_total = 0.0
    for _ in range(replications):
        true_pass = rng.random(runs) < truth
        judged_pass = np.where(true_pass, rng.random(runs) < tpr, rng.random(runs) < 1 - tnr)
        people = rng.random(labels) < truth
        judge = np.where(people, rng.random(labels) < tpr, rng.random(labels) < 1 - tnr)
        confusion = Confusion(
            tp=int((people & judge).sum()),
            fn=int((people & ~judge).sum()),
            fp=int((~people & judge).sum()),
            tn=int((~people & ~judge).sum()),
        )
        rate = corrected_pass_rate(int(judged_pass.sum()), runs, confusion)
        raw_total += rate.raw
        if rate.estimate is None:
            refused += 1
        elif rate.estimate.low <= truth <= rate.estimate.high:
            covered += 1
    return covered / replications, refused / replications, raw_total / replications - truth


def test_the_corrected_interval_covers_the_true_rate(capsys: pytest.CaptureFixture[str]) -> None:
    coverage, refused, raw_bias = _simulate(
        0.70, 0.85, 0.90, labels=200, runs=5000, replications=1000, seed=1
    )
    with capsys.disabled():
        print(f"\ncorrected interval coverage {coverage:.3f}; raw pass rate bias {raw_bias:+.4f}")
    assert refused == 0
    assert coverage >= 0.93
    # the judge's raw rate is 0.7 * 0.85 + 0.3 * 0.10 = 0.625: 7.5 points low
    assert raw_bias == pytest.approx(-0.075, abs=0.003)


def test_a_useless_judge_gets_no_corrected_rate() -> None:
    _, refused, _ = _simulate(0.70, 0.60, 0.40, labels=200, runs=5000, replications=1000, seed=2)
    assert refused >= 0.995
