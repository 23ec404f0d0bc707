"""A panel run's statistics (metrics.panel_summary): member and rule metrics on hand-counted votes, the
stacked rule's logistic fit against an independent Newton (IRLS) fit and on known weights, its
cross-validation (an item's label never reaches its own verdict), and the paired test's counts."""

from __future__ import annotations

import numpy as np
import pytest

from cejudge_dspy.data import Item
from cejudge_dspy.judges.panel import MemberOutcome, combine
from cejudge_dspy.judges.verdicts import JudgeResult
from cejudge_dspy.metrics import fit_logistic, fleiss_kappa_from_labels, panel_summary, stack_pairwise
from cejudge_dspy.runs import Record
from cejudge_dspy.tasks import load_task


def _record(i: int, label: str, votes: dict[str, str]) -> Record:
    item = Item(f"i{i:02d}", "pairwise", "q", response_a="a", response_b="b", label=label)
    outcomes = [
        MemberOutcome(n, "ok", JudgeResult("pairwise", "ok", method="direct", verdict=v))
        for n, v in votes.items()
    ]
    result = combine("pairwise", outcomes)
    return Record(item.id, "chat", "panel", "ok", item, result, members=[o.to_dict() for o in outcomes])


# Six labelled items, three members. Correct: a 6/6, b 2/6, c 4/6; the majority is right on 5 (not i02).
LABELS = ["A", "B", "A", "B", "A", "B"]
VOTES = {
    "a": ["A", "B", "A", "B", "A", "B"],
    "b": ["A", "A", "B", "B", "B", "A"],
    "c": ["A", "B", "B", "A", "A", "B"],
}


def _records() -> list[Record]:
    return [_record(i, LABELS[i], {n: VOTES[n][i] for n in VOTES}) for i in range(len(LABELS))]


def test_members_and_the_majority_are_scored_against_the_labels() -> None:
    summary = panel_summary(_records(), load_task("chat"), n_resamples=0)
    assert summary is not None
    members = {n: m["value"] for n, m in summary["members"].items()}
    assert members == pytest.approx({"a": 1.0, "b": 2 / 6, "c": 4 / 6})
    # Majority per item: A, B, B, B, A, B -> right on items 0, 1, 3, 4, 5.
    assert summary["rules"]["majority"]["value"] == pytest.approx(5 / 6)
    assert summary["best_member"] == "a"
    # McNemar against a: the panel is right where a is wrong on no item, wrong where a is right on one.
    test = summary["tests"]["majority"]
    assert (test["extra"]["b"], test["extra"]["c"], test["against"]) == (0, 1, "a")
    assert test["p_value"] == pytest.approx(1.0)
    # The other members against a: b is wrong on 4 items a got right, c on 2; neither is right where a is not.
    assert set(summary["member_tests"]) == {"b", "c"}
    assert [summary["member_tests"][n]["extra"]["c"] for n in ("b", "c")] == [4, 2]
    assert summary["member_tests"]["b"]["p_value"] == pytest.approx(0.125)  # binomial 0 of 4, two-sided
    # Each member against the panel's verdicts: a agrees on 5/6, b on 3/6 (items 0, 3, 5), c on 5/6.
    vs = {n: m["value"] for n, m in summary["members_vs_panel"].items()}
    assert vs == pytest.approx({"a": 5 / 6, "b": 0.5, "c": 5 / 6})


def test_agreement_across_members_is_the_reference_checked_kappa() -> None:
    summary = panel_summary(_records(), load_task("chat"), n_resamples=0)
    expected = fleiss_kappa_from_labels(list(VOTES.values()), categories=("A", "B", "tie"))
    assert summary["agreement"]["fleiss_kappa"]["value"] == pytest.approx(expected.value)
    assert summary["agreement"]["unanimous"] == 1 and summary["agreement"]["no_majority"] == 0
    # Per item, shares agreeing: 1, 2/3 x 5 -> mean 13/18.
    assert summary["agreement"]["mean_agreement"] == pytest.approx(13 / 18)


def test_a_single_judge_run_has_no_panel_section() -> None:
    records = [replace_members(r) for r in _records()]
    assert panel_summary(records, load_task("chat")) is None


def replace_members(record: Record) -> Record:
    record.members = None
    return record


def _irls(x: np.ndarray, y: np.ndarray, l2: float, steps: int = 50) -> np.ndarray:
    """The penalised logistic fit by Newton's method (iteratively reweighted least squares): the reference
    for `fit_logistic`, which minimises the same loss with L-BFGS."""
    design = np.column_stack([np.ones(len(x)), x])
    penalty = np.diag(np.r_[0.0, np.full(x.shape[1], l2)])
    w = np.zeros(design.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-design @ w))
        grad = design.T @ (p - y) + penalty @ w
        hess = design.T @ (design * (p * (1 - p))[:, None]) + penalty
        w -= np.linalg.solve(hess, grad)
    return w


def test_the_logistic_fit_matches_newtons_method_and_recovers_known_weights() -> None:
    rng = np.random.default_rng(7)
    x = rng.uniform(-0.5, 0.5, size=(4000, 3))
    true = np.array([0.3, 4.0, -2.0, 0.0])  # intercept, then one weight per member
    y = (rng.uniform(size=4000) < 1 / (1 + np.exp(-(true[0] + x @ true[1:])))).astype(float)
    for l2 in (1.0, 1e-6):
        assert fit_logistic(x, y, l2) == pytest.approx(_irls(x, y, l2), abs=1e-3)
    assert fit_logistic(x, y, 1e-6) == pytest.approx(true, abs=0.35)  # the sampling error at n = 4000


def _stack_features(n: int, seed: int = 3) -> tuple[list[str], np.ndarray, list[str]]:
    """Member 'good' leans towards the label, 'noise' is random."""
    rng = np.random.default_rng(seed)
    labels = ["A" if rng.uniform() < 0.5 else "B" for _ in range(n)]
    good = [(0.3 if g == "A" else -0.3) + rng.normal(0, 0.15) for g in labels]
    noise = list(rng.uniform(-0.5, 0.5, n))
    return ["good", "noise"], np.column_stack([good, noise]), labels


def test_stacking_weighs_the_informative_member() -> None:
    names, x, labels = _stack_features(60)
    preds, extra = stack_pairwise((names, x), labels, tie_band=0.0, seed=1)
    assert extra["folds"] == 5 and extra["weights"]["good"] > 5 * abs(extra["weights"]["noise"])
    assert sum(p == g for p, g in zip(preds, labels, strict=True)) >= 54


def test_stacking_needs_labelled_items_of_both_sides() -> None:
    names, x, _ = _stack_features(10)
    preds, extra = stack_pairwise((names, x), ["A"] * 10, tie_band=0.0, seed=1)
    assert preds == [None] * 10 and "both sides" in extra["reason"]


def test_a_stacked_verdict_comes_from_the_other_folds_labels_only() -> None:
    """Members that say nothing (every feature 0) leave the fit only its intercept: the share of A among
    the training labels. Ten items, five A, in five folds of two: an item whose fold-mate shares its label
    is predicted from 3 of 8 on its side (the other side wins); a mixed fold from 4 of 8 (a tie). A fit that
    saw the item itself would give 5 of 10 everywhere: a tie."""
    labels = ["A", "B"] * 5
    x = np.zeros((10, 2))
    seen_sides = 0
    for seed in range(12):
        preds, _ = stack_pairwise((["m1", "m2"], x), labels, tie_band=0.02, seed=seed)
        for p, g in zip(preds, labels, strict=True):
            assert p in ("tie", "B" if g == "A" else "A")
        seen_sides += sum(p != "tie" for p in preds)
    assert seen_sides > 0


def _scored(i: int, label: float, scores: dict[str, float]) -> Record:
    item = Item(f"p{i:02d}", "pointwise", "src", response="r", label=label)
    outcomes = [MemberOutcome(n, "ok", JudgeResult("pointwise", "ok", score=s)) for n, s in scores.items()]
    result = combine("pointwise", outcomes)
    return Record(item.id, "literary", "panel", "ok", item, result, members=[o.to_dict() for o in outcomes])


def test_a_pointwise_panel_scores_the_mean_and_stacks_by_least_squares() -> None:
    from cejudge_dspy.metrics import kendall_tau, stack_pointwise

    rng = np.random.default_rng(5)
    labels = [float(v) for v in rng.integers(1, 6, size=40)]
    good = [g + rng.normal(0, 0.3) for g in labels]  # close to the label
    flat = [3.0 + rng.normal(0, 0.5) for _ in labels]  # says nothing
    records = [
        _scored(i, g, {"good": a, "flat": b})
        for i, (g, a, b) in enumerate(zip(labels, good, flat, strict=True))
    ]
    summary = panel_summary(records, load_task("literary"), n_resamples=200, seed=1)
    assert summary["members"]["good"]["value"] == pytest.approx(kendall_tau(good, labels).value)
    mean = [(a + b) / 2 for a, b in zip(good, flat, strict=True)]
    assert summary["rules"]["mean"]["value"] == pytest.approx(kendall_tau(mean, labels).value)
    stacked = summary["rules"]["stacked"]
    assert stacked["weights"]["good"] > 0.8 and abs(stacked["weights"]["flat"]) < 0.3
    assert (
        summary["tests"]["mean"]["name"] == "kendall_tau_diff"
        and summary["tests"]["mean"]["against"] == "good"
    )
    assert summary["agreement"]["krippendorff_alpha"]["name"] == "krippendorff_alpha_interval"
    preds, _ = stack_pointwise((["good", "flat"], np.column_stack([good, flat])), labels, seed=1)
    assert stacked["value"] == pytest.approx(kendall_tau(preds, labels).value)


def test_without_resamples_a_correlation_test_has_a_difference_and_no_p_value() -> None:
    labels = [1.0, 2.0, 3.0, 4.0, 5.0, 2.0]
    records = [_scored(i, g, {"x": g, "y": 6 - g}) for i, g in enumerate(labels)]
    summary = panel_summary(records, load_task("literary"), n_resamples=0)
    test = summary["member_tests"]["y"]
    assert (
        test["value"] == pytest.approx(-2.0) and test["p_value"] is None and "--bootstrap 0" in test["reason"]
    )
