"""The bootstrap, vectorised (issue 14): the same numbers for the same seed as the per-resample loop.

The literals below were printed by the per-resample implementation (commit 6bab881) on these inputs.
"""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest

from cejudge_dspy.metrics import accuracy, bootstrap_ci, kendall_tau, paired_bootstrap_diff, pearson, spearman


def pairwise(n: int = 40, seed: int = 3) -> tuple[list[str | None], list[str]]:
    rng = random.Random(seed)
    golds = [rng.choice(["A", "B", "A", "B", "tie"]) for _ in range(n)]
    preds = [None if rng.random() < 0.1 else rng.choice(["A", "B", "A", "tie"]) for _ in range(n)]
    return preds, golds


def pointwise(n: int = 30, seed: int = 4) -> tuple[list[float | None], list[float]]:
    rng = random.Random(seed)
    golds = [float(rng.randint(1, 7)) for _ in range(n)]
    preds = [
        None if rng.random() < 0.1 else float(min(7, max(1, g + rng.choice([-2, -1, 0, 0, 1]))))
        for g in golds
    ]
    return preds, golds


def test_accuracy_ci_as_the_loop_gave_it() -> None:
    r = bootstrap_ci(accuracy, *pairwise(), n_resamples=200, seed=7)
    assert (r.value, r.ci_low, r.ci_high) == (0.2857142857142857, 0.13760775862068972, 0.4616071428571429)
    assert r.extra["n_resamples_undefined"] == 0 and r.extra["n_gold_ties"] == 10


@pytest.mark.parametrize(
    ("fn", "value", "low", "high"),
    [
        (kendall_tau, 0.8743705218749139, 0.7740754599213608, 0.947412067663967),
        (spearman, 0.9437251573419576, 0.8657188604964201, 0.9788547486626725),
        (pearson, 0.9446801091254219, 0.899382504203002, 0.9804652274893945),
    ],
)
def test_correlation_ci_as_the_loop_gave_it(fn: object, value: float, low: float, high: float) -> None:
    r = bootstrap_ci(fn, *pointwise(), n_resamples=200, seed=7)  # type: ignore[arg-type]
    # To the last few bits only: scipy's sums differ in the 16th digit between CPUs (AMD EPYC vs Xeon).
    assert (r.value, r.ci_low, r.ci_high) == pytest.approx((value, low, high), rel=1e-12, abs=0)


def test_undefined_resamples_counted_as_the_loop_counted_them() -> None:
    r = bootstrap_ci(spearman, [1.0, 2.0, None, 2.0, 3.0], [1.0, 1.0, 2.0, 3.0, 3.0], n_resamples=100, seed=1)
    assert (r.ci_low, r.ci_high, r.extra["n_resamples_undefined"]) == (0.3333333333333333, 1.0, 20)


@pytest.mark.parametrize(
    ("fn", "value", "low", "high", "p"),
    [
        (kendall_tau, 0.014589074104008448, -0.0311918210393802, 0.07026738080721584, 0.49),
        (spearman, 0.005630250050577268, -0.01659312608704159, 0.041004442424016, 0.52),
        (pearson, 0.016748225524434, -0.011419931727082397, 0.04931292040782273, 0.17),
    ],
)
def test_paired_difference_as_the_loop_gave_it(
    fn: object, value: float, low: float, high: float, p: float
) -> None:
    a, g = pointwise()
    b = [None if x is None else (x + 1.0 if i % 3 else x) for i, x in enumerate(a)]
    r = paired_bootstrap_diff(fn, a, b, g, n_resamples=200, seed=7)  # type: ignore[arg-type]
    # To the last few bits only (see above); the p value is a count of resamples, exact.
    assert (r.value, r.ci_low, r.ci_high) == pytest.approx((value, low, high), rel=1e-12, abs=0)
    assert r.p_value == p


def test_accuracy_resamples_by_hand() -> None:
    # Item 0 right, item 1 wrong, item 2 a gold tie (never scored): a resample's accuracy is
    # (#draws of 0) / (#draws of 0 or 1), undefined when it drew only item 2.
    preds, golds = ["A", "A", "B"], ["A", "B", "tie"]
    idx = np.random.default_rng(5).integers(0, 3, size=(300, 3))
    right, scored = (idx == 0).sum(axis=1), (idx != 2).sum(axis=1)
    values = [r / s for r, s in zip(right, scored, strict=True) if s]
    r = bootstrap_ci(accuracy, preds, golds, n_resamples=300, seed=5)
    assert r.value == 0.5
    assert r.extra["n_resamples_undefined"] == int((scored == 0).sum()) > 0
    assert (r.ci_low, r.ci_high) == tuple(np.percentile(values, [2.5, 97.5]))


def test_all_right_gives_a_point_interval_and_one_item_its_own_value() -> None:
    assert bootstrap_ci(accuracy, ["A", "B"] * 5, ["A", "B"] * 5).ci_low == 1.0
    one = bootstrap_ci(accuracy, ["B"], ["A"], n_resamples=50)
    assert (one.value, one.ci_low, one.ci_high) == (0.0, 0.0, 0.0)


def test_undefined_point_gives_no_interval() -> None:
    r = bootstrap_ci(accuracy, [None, None], ["A", "B"])
    assert r.ci_low is None and r.ci_high is None and not r.defined


def test_any_other_metric_takes_the_general_path_with_the_same_numbers() -> None:
    preds, golds = pairwise()
    scored = [(p, g) for p, g in zip(preds, golds, strict=True) if g != "tie"]
    p, g = [x for x, _ in scored], [y for _, y in scored]
    general = functools.partial(accuracy, include_gold_ties=True)  # no ties left: the same metric
    fast, slow = bootstrap_ci(accuracy, p, g, seed=11), bootstrap_ci(general, p, g, seed=11)
    assert (fast.ci_low, fast.ci_high) == (slow.ci_low, slow.ci_high)


def test_strict_accuracy_resamples_as_the_metric_gives_them() -> None:
    from cejudge_dspy.metrics import strict_accuracy
    from cejudge_dspy.metrics._significance import _resampled_values

    preds, golds = pairwise(n=60, seed=9)
    golds[3] = None  # an errored item: excluded, not scored wrong
    idx = np.random.default_rng(2).integers(0, len(preds), size=(300, len(preds)))
    fast = _resampled_values(strict_accuracy, [preds, golds], idx)
    loop = _resampled_values(lambda p, g: strict_accuracy(p, g), [preds, golds], idx)  # no fast path
    assert np.array_equal(fast, loop, equal_nan=True) and not np.isnan(fast).all()
    r = bootstrap_ci(strict_accuracy, preds, golds, n_resamples=200, seed=7)
    slow = bootstrap_ci(lambda p, g: strict_accuracy(p, g), preds, golds, n_resamples=200, seed=7)
    assert (r.value, r.ci_low, r.ci_high) == (slow.value, slow.ci_low, slow.ci_high)
    assert r.extra["n_unparsed"] > 0  # the fill was exercised
