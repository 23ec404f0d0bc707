"""The consistency measures (`metrics._consistency`): flip rate, mean absolute score change, the share of
items changed, and McNemar between two judges, checked on hand-counted cases and against scipy."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from cejudge_dspy.metrics import (
    changed,
    changed_rate,
    flip_rate,
    mean_abs_change,
    paired_consistency,
    rendering_consistency,
)


def test_flip_rate_counts_changed_verdicts_and_excludes_missing_ones() -> None:
    result = flip_rate(["A", "B", "A", None, "tie"], ["A", "A", "b", "A", "A"])
    assert (result.n, result.n_excluded) == (4, 1)
    assert result.value == pytest.approx(3 / 4)  # B->A, A->B, tie->A
    assert result.extra["flips"] == 3


def test_flip_rate_without_a_pair_is_undefined_with_a_reason() -> None:
    result = flip_rate([None, "A"], ["A", None])
    assert math.isnan(result.value) and result.n == 0 and result.reason


def test_mean_abs_change_and_changed_flags_on_scores() -> None:
    original, rendered = [1, 2, 3, None], [1, 4, 2.5, 3]
    result = mean_abs_change(original, rendered)
    assert result.value == pytest.approx((0 + 2 + 0.5) / 3) and result.n_excluded == 1
    assert changed(original, rendered, "pointwise") == [False, True, True, None]


def test_changed_rate_is_the_share_of_true_flags() -> None:
    result = changed_rate([True, False, None, True])
    assert result.value == pytest.approx(2 / 3) and (result.n, result.n_excluded) == (3, 1)


def test_paired_consistency_is_mcnemars_exact_test_on_kept_items() -> None:
    # Judge A keeps 9 of 10, judge B keeps 3 of 10; only A keeps 6 items, only B none.
    flips_a = [False] * 9 + [True]
    flips_b = [False] * 3 + [True] * 7
    result = paired_consistency(flips_a, flips_b)
    assert (result.extra["b"], result.extra["c"]) == (6, 0)
    assert result.value == pytest.approx(0.9 - 0.3)
    assert result.p_value == pytest.approx(stats.binomtest(6, 6, 0.5).pvalue)


def test_rendering_consistency_gives_cis_and_pointwise_kendall_as_scipy() -> None:
    original = ["A", "B"] * 10
    rendered = ["A", "B"] * 8 + ["B", "A"] * 2
    flips = rendering_consistency(original, rendered, "pairwise", n_resamples=200)["flip_rate"]
    assert flips.value == pytest.approx(4 / 20)
    assert flips.ci_low is not None and flips.ci_low <= flips.value <= flips.ci_high
    a, b = [1, 2, 3, 4, 5, 3], [1, 3, 2, 4, 5, 3]
    pointwise = rendering_consistency(a, b, "pointwise", n_resamples=0)
    assert pointwise["kendall"].value == pytest.approx(stats.kendalltau(a, b).statistic)
    assert pointwise["mean_abs_change"].value == pytest.approx(2 / 6)
