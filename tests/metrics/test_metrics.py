"""Meta-metrics against hand-computed values (arithmetic in the comments) and scipy."""

from __future__ import annotations

import dataclasses
import json
import math
import pickle
from functools import partial

import pytest
from scipy import stats

from cejudge_dspy.errors import InputError
from cejudge_dspy.metrics import (
    MetricResult,
    accuracy,
    bootstrap_ci,
    concordance,
    fleiss_kappa,
    fleiss_kappa_from_labels,
    kendall_tau,
    krippendorff_alpha,
    mcnemar,
    paired_bootstrap_diff,
    pearson,
    position_consistency,
    spearman,
)
from cejudge_dspy.metrics._measures import share

NAN = float("nan")


# --- MetricResult -------------------------------------------------------------------------------


def test_metric_result_is_frozen_and_json_safe() -> None:
    r = MetricResult("kendall_tau", NAN, 1, 2, reason="fewer than 2 scored items", extra={"k": NAN})
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.value = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        r.extra["k"] = 1  # type: ignore[index]
    d = r.to_dict()
    assert d["value"] is None and d["extra"] == {"k": None} and d["n_excluded"] == 2
    json.dumps(d, allow_nan=False)  # would raise on a NaN
    assert type(d["extra"]) is dict
    assert pickle.loads(pickle.dumps(r)).to_dict() == d  # results cross process pools
    assert hash(MetricResult("x", 0.5, 2, extra={"b": 1})) == hash(MetricResult("x", 0.5, 2, extra={"b": 1}))
    assert not r.defined and MetricResult("x", 0.5, 2).defined


# --- accuracy -----------------------------------------------------------------------------------


PREDS = ["A", "B", "tie", "A", None, "B", NAN]
GOLDS = ["A", "A", "B", "tie", "B", None, "A"]
# item 0 A/A right; 1 B/A wrong; 2 tie/B wrong (a predicted tie); 3 gold tie; 4, 5, 6 missing.


def test_accuracy_excludes_missing_and_gold_ties() -> None:
    r = accuracy(PREDS, GOLDS)
    # scored: items 0, 1, 2 -> 1 right of 3
    assert r.value == pytest.approx(1 / 3)
    assert (r.n, r.n_excluded) == (3, 3)
    assert r.extra == {"n_correct": 1, "n_pred_ties": 1, "n_gold_ties": 1}
    assert r.n + r.n_excluded + r.extra["n_gold_ties"] == len(PREDS)


def test_accuracy_can_include_gold_ties() -> None:
    # item 3 (A vs gold tie) is now scored and wrong: 1 right of 4
    r = accuracy(PREDS, GOLDS, include_gold_ties=True)
    assert r.value == pytest.approx(1 / 4) and r.n == 4
    # a predicted tie on a gold tie is right; labels are case-insensitive
    assert accuracy(["TIE", "a"], ["tie", "A"], include_gold_ties=True).value == 1.0


def test_accuracy_edge_cases() -> None:
    r = accuracy([None, "A"], ["A", "tie"])
    assert math.isnan(r.value) and r.reason == "no scored items" and r.n_excluded == 1
    with pytest.raises(InputError, match="item 1.*preds"):
        accuracy(["A", "C"], ["A", "B"])
    with pytest.raises(InputError, match="same length"):
        accuracy(["A"], ["A", "B"])


# --- correlations -------------------------------------------------------------------------------


def test_kendall_tau_b_with_ties_by_hand() -> None:
    x = [1, 2, 2, 3, 5]
    y = [1, 3, 2, 2, 4]
    # 10 pairs. Concordant: (1,2) (1,3) (1,4) (1,5) (2,5) (3,5) (4,5) = 7; discordant: (2,4) = 1;
    # tied in x only: (2,3); tied in y only: (3,4).
    # tau_b = (C - D) / sqrt((n0 - n1)(n0 - n2)) = (7 - 1) / sqrt((10 - 1)(10 - 1)) = 6 / 9
    r = kendall_tau(x + [None], y + [4])
    assert r.value == pytest.approx(6 / 9)
    assert r.value == pytest.approx(stats.kendalltau(x, y).statistic)
    assert (r.n, r.n_excluded) == (5, 1) and r.p_value is not None


def test_spearman_and_pearson_by_hand() -> None:
    # ranks differ by d = (0, 1, 1, 0): rho = 1 - 6 * 2 / (4 * (16 - 1)) = 0.8
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]).value == pytest.approx(0.8)
    # deviations (-1, 0, 1) and (-1, 1, 0): r = 1 / sqrt(2 * 2) = 0.5
    r = pearson([1, 2, 3, NAN], [1, 3, 2, 7])
    assert r.value == pytest.approx(0.5) and r.n_excluded == 1


@pytest.mark.parametrize("fn", [kendall_tau, spearman, pearson])
def test_correlation_undefined_cases(fn) -> None:
    const = fn([1, 2, 3], [4, 4, 4])
    assert math.isnan(const.value) and const.reason == "constant y: correlation undefined"
    short = fn([1, None], [2, 3])
    assert math.isnan(short.value) and short.reason == "fewer than 2 scored items" and short.n == 1
    with pytest.raises(InputError, match="non-numeric"):
        fn([1, "x"], [1, 2])


# --- small helpers ------------------------------------------------------------------------------


def test_share_and_concordance() -> None:
    r = share(["A", "B", "A", None], "A")  # 2 of the 3 present values
    assert r.value == pytest.approx(2 / 3) and r.n_excluded == 1 and r.extra["n_target"] == 2
    assert concordance(3, 1, 2, 1) == 1
    assert concordance(1, 3, 2, 1) == -1
    assert concordance(2, 2, 3, 1) == 0
    assert concordance(None, 2, 3, 1) is None


def test_position_consistency() -> None:
    ab = ["A", "B", "A", "tie", "A", None, "B"]
    ba = ["A", "B", "B", "tie", "tie", "A", "A"]
    # consistent: items 0, 1, 3 (tie == tie); flipped: 2, 6; tie mismatch: 4; excluded: 5 -> 3 / 6
    r = position_consistency(ab, ba)
    assert r.value == pytest.approx(0.5) and (r.n, r.n_excluded) == (6, 1)
    assert r.extra == {"n_consistent": 3, "n_flipped": 2, "n_tie_mismatch": 1}


# --- significance -------------------------------------------------------------------------------


def test_mcnemar_exact_by_hand() -> None:
    # 3 both right, b = 1 only A right, c = 6 only B right, 2 both wrong, 1 missing
    a = [True] * 3 + [True] + [False] * 6 + [False] * 2 + [None]
    b = [True] * 3 + [False] + [True] * 6 + [False] * 2 + [True]
    r = mcnemar(a, b)
    assert (r.extra["b"], r.extra["c"], r.n, r.n_excluded) == (1, 6, 12, 1)
    # two-sided exact: 2 * P(X <= 1 | n = 7, p = 1/2) = 2 * (1 + 7) / 128 = 0.125
    assert r.p_value == pytest.approx(0.125)
    assert r.value == pytest.approx((1 - 6) / 12)  # acc_a - acc_b = 4/12 - 9/12
    assert mcnemar([True, False], [True, False]).p_value == 1.0  # no discordant pairs
    with pytest.raises(InputError, match="item 1"):
        mcnemar([True, "yes"], [True, False])


def test_bootstrap_is_deterministic_and_brackets_the_estimate() -> None:
    golds = ["A", "B"] * 20
    preds = ["A", "B", "B", "A", "A", None, "A", "B"] * 5
    first = bootstrap_ci(accuracy, preds, golds, n_resamples=200, seed=7)
    again = bootstrap_ci(accuracy, preds, golds, n_resamples=200, seed=7)
    other = bootstrap_ci(accuracy, preds, golds, n_resamples=200, seed=8)
    assert first == again
    assert (first.ci_low, first.ci_high) != (other.ci_low, other.ci_high)
    assert first.value == accuracy(preds, golds).value  # the point estimate is unchanged
    assert first.ci_low < first.value < first.ci_high
    # per block of 8: right at 0, 1, 4, 6, 7; wrong at 2, 3; item 5 missing -> 5 x 5 = 25 of 35
    assert first.value == pytest.approx(25 / 35) and first.n_excluded == 5
    assert first.extra["n_resamples"] == 200 and first.extra["n_correct"] == 25


def test_bootstrap_counts_undefined_resamples_and_skips_undefined_points() -> None:
    # 3 items: some resamples repeat one item, so x is constant and tau is undefined there
    r = bootstrap_ci(kendall_tau, [1, 2, 3], [1, 3, 2], n_resamples=100)
    assert r.extra["n_resamples_undefined"] > 0
    undefined = bootstrap_ci(kendall_tau, [1, 1], [1, 2])
    assert math.isnan(undefined.value) and undefined.ci_low is None
    with pytest.raises(InputError, match="confidence"):
        bootstrap_ci(accuracy, ["A"], ["A"], confidence=95)


def test_bootstrap_over_units_for_agreement() -> None:
    # one sequence per rater: resampling indices resamples units, keeping each unit's ratings together
    r = bootstrap_ci(lambda *rows: krippendorff_alpha(rows), *REFERENCE, n_resamples=200)
    assert round(r.value, 3) == 0.743 and r.ci_low < r.value < r.ci_high
    assert r == bootstrap_ci(lambda *rows: krippendorff_alpha(rows), *REFERENCE, n_resamples=200)


def test_paired_bootstrap_diff() -> None:
    golds = [i % 5 for i in range(40)]
    good = list(golds)  # tau = 1
    noisy = [(g + i % 3) % 5 for i, g in enumerate(golds)]
    r = paired_bootstrap_diff(kendall_tau, good + [None], noisy + [1], golds + [2], n_resamples=300)
    expected = 1.0 - kendall_tau(noisy, golds).value
    assert r.value == pytest.approx(expected) and r.n_excluded == 1 and r.n == 40
    assert 0 < r.ci_low <= r.value <= r.ci_high and r.p_value < 0.05
    assert r == paired_bootstrap_diff(kendall_tau, good + [None], noisy + [1], golds + [2], n_resamples=300)
    tau_with = partial(accuracy, include_gold_ties=True)
    assert paired_bootstrap_diff(tau_with, ["A"], ["B"], ["A"], n_resamples=10).value == 1.0


# --- Krippendorff's alpha -----------------------------------------------------------------------


def test_krippendorff_nominal_by_hand() -> None:
    ratings = [["a", "a", "b"], ["a", "b", "b"], ["a", "b", "b"]]
    # unit 1 {a,a,a}: o_aa += 3*2/2 = 3; unit 2 {a,b,b}: o_ab = o_ba += 1*2/2 = 1, o_bb += 2*1/2 = 1;
    # unit 3 {b,b,b}: o_bb += 3.  o = [[3, 1], [1, 4]], n_a = 4, n_b = 5, n = 9.
    # alpha = 1 - (n - 1) * sum_{c!=k} o_ck / sum_{c!=k} n_c n_k = 1 - 8 * 2 / (2 * 4 * 5) = 0.6
    r = krippendorff_alpha(ratings)
    assert r.value == pytest.approx(0.6)
    assert (r.n, r.extra["n_values"]) == (3, 9)


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section E: 4 observers x 12 units.
REFERENCE = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


@pytest.mark.parametrize(
    ("level", "expected"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_krippendorff_reference_example(level, expected) -> None:
    r = krippendorff_alpha(REFERENCE, level)
    assert round(r.value, 3) == expected
    # unit 12 has a single value: not pairable; 48 cells - 7 missing - 1 lone value = 40 pairable
    assert (r.n, r.n_excluded, r.extra["n_values"], r.extra["n_missing"]) == (11, 1, 40, 7)
    assert r.name == f"krippendorff_alpha_{level}"


def test_krippendorff_edge_cases() -> None:
    same = krippendorff_alpha([[1, 1, 1], [1, 1, 1]], "interval")
    assert math.isnan(same.value) and same.reason.startswith("no variation")
    lone = krippendorff_alpha([[1, None], [None, 2]])
    assert math.isnan(lone.value) and lone.n_excluded == 2
    assert krippendorff_alpha([[1, 2, 3], [1, 2, 3]], "ordinal").value == pytest.approx(1.0)
    with pytest.raises(InputError, match="numeric"):
        krippendorff_alpha([["x", "y"], ["x", "y"]], "interval")
    with pytest.raises(InputError, match="rater 1"):
        krippendorff_alpha([[1, 2], [1]])
    with pytest.raises(InputError, match="level"):
        krippendorff_alpha([[1, 2], [1, 2]], "cardinal")  # type: ignore[arg-type]


# --- Fleiss' kappa ------------------------------------------------------------------------------


def test_fleiss_kappa_wikipedia_example() -> None:
    # en.wikipedia.org/wiki/Fleiss'_kappa worked example: 10 subjects, 14 raters, 5 categories.
    counts = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    r = fleiss_kappa(counts)
    # P_bar = 0.378, P_e = 0.213, kappa = (0.378 - 0.213) / (1 - 0.213) = 0.210
    assert round(r.extra["p_observed"], 3) == 0.378 and round(r.extra["p_expected"], 3) == 0.213
    assert round(r.value, 3) == 0.210 and r.n == 10


def test_fleiss_kappa_from_labels_drops_incomplete_units() -> None:
    labels = [["a", "a", "b"], ["a", "b", "b"], ["a", "b", None]]
    # unit 3 has 2 of 3 labels: dropped. Counts [[3, 0], [1, 2]], n = 3 raters, N = 2 units.
    # P_1 = (9 - 3) / 6 = 1, P_2 = (1 + 4 - 3) / 6 = 1/3, P_bar = 2/3;
    # p_a = 4/6, p_b = 2/6, P_e = 16/36 + 4/36 = 5/9; kappa = (2/3 - 5/9) / (4/9) = 0.25
    r = fleiss_kappa_from_labels(labels)
    assert r.value == pytest.approx(0.25) and (r.n, r.n_excluded) == (2, 1)
    two = fleiss_kappa_from_labels(labels, n_raters=2)  # only unit 3 has exactly 2 labels
    assert (two.n, two.n_excluded) == (1, 2)


def test_fleiss_kappa_edge_cases() -> None:
    with pytest.raises(InputError, match="unit 1"):
        fleiss_kappa([[2, 1], [1, 1]])
    one_category = fleiss_kappa([[3, 0], [3, 0]])
    assert math.isnan(one_category.value) and one_category.reason.startswith("no variation")
    with pytest.raises(InputError, match="not one of"):
        fleiss_kappa_from_labels([["a"], ["b"]], categories=["a"])
