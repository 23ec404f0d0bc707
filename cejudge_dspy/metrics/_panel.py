"""A panel run measured: each member and each panel rule against the human labels with CIs, the members'
agreement with one another and with the panel, and paired tests of each rule against the best member.

Input: a panel run's records (`runs.Record` with `members`, the panel's own result in `result`; see
judges.panel). The rules:

* `majority` (pairwise) / `mean` (pointwise): the records' headline, as judges.panel.combine decided it;
* `mean` (pairwise): the verdict of the mean of the members' p(A) with the run's tie band;
  `majority` (pointwise): the score most members gave, rounded to a level (the mean where none has a
  majority);
* `stacked`: a weighted mean with weights fitted on labelled items, cross-validated (`stack_folds`
  folds): an item's stacked verdict or score comes from weights fitted on the other folds only, so a run
  never scores a weight on the item it was fitted on. Pairwise: L2-regularised logistic regression of
  "the human preferred A" on the members' p(A) - 0.5, fitted with scipy.optimize; pointwise: least squares
  of the human score on the members' scores. `weights` are the fit on every labelled item, for reading.

Agreement across members: Fleiss' kappa (pairwise verdicts, items every member voted on) and Krippendorff's
alpha (nominal verdicts pairwise, interval scores pointwise). Paired tests against the best single member
(its overall metric), of each rule and each other member: McNemar on per-item correctness for accuracy, the
paired bootstrap of the difference for correlations (metrics._significance).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from cejudge_dspy.judges.verdicts import verdict_from_preference
from cejudge_dspy.metrics._agreement import fleiss_kappa_from_labels, krippendorff_alpha
from cejudge_dspy.metrics._correlations import CORRELATIONS
from cejudge_dspy.metrics._measures import accuracy
from cejudge_dspy.metrics._scoring import item_counts, prediction
from cejudge_dspy.metrics._significance import bootstrap_ci, mcnemar, paired_bootstrap_diff
from cejudge_dspy.metrics._summary import MIN_CI_ITEMS
from cejudge_dspy.runs import Record, member_records
from cejudge_dspy.tasks import TaskSpec

STACK_FOLDS = 5
# The logistic stack's L2 penalty on the weights (not the intercept): members' p(A) often separate the
# labelled items perfectly, where the unpenalised fit has no finite optimum.
STACK_L2 = 1.0


def panel_summary(
    records: Sequence[Record],
    spec: TaskSpec,
    *,
    n_resamples: int = 1000,
    seed: int = 42,
    folds: int = STACK_FOLDS,
) -> dict[str, Any] | None:
    """The panel section of a run's summary (see the module docstring); None for a single judge's run."""
    rows = sorted({r.id: r for r in records}.values(), key=lambda r: r.id)
    by_member = {name: _aligned(rows, recs) for name, recs in member_records(rows).items()}
    if not by_member:
        return None
    golds = [r.item.label if not isinstance(r.item.label, dict) else None for r in rows]
    rules = _rules(rows, by_member, spec, golds, seed, folds)
    fn = _metric_fn(spec)
    members = {
        name: _scored(fn, [prediction(r) for r in recs], golds, n_resamples, seed, recs)
        for name, recs in by_member.items()
    }
    scored_rules = {
        name: _scored(fn, preds, golds, n_resamples, seed, rows) | extra
        for name, (preds, extra) in rules.items()
    }
    best = max(members, key=lambda n: _value(members[n]))
    best_preds = [prediction(r) for r in by_member[best]]
    panel_votes = [prediction(r) for r in rows]
    return {
        "members": members,
        "rules": scored_rules,
        "headline_rule": "majority" if spec.mode == "pairwise" else "mean",
        "best_member": best,
        "tests": {
            name: _paired_test(spec, preds, best_preds, golds, n_resamples, seed) | {"against": best}
            for name, (preds, _) in rules.items()
        },
        # The other members against the best one on the same items (the same tests).
        "member_tests": {
            name: _paired_test(spec, [prediction(r) for r in recs], best_preds, golds, n_resamples, seed)
            | {"against": best}
            for name, recs in by_member.items()
            if name != best
        },
        "agreement": _agreement(rows, by_member, spec),
        "members_vs_panel": {
            name: _against(spec, [prediction(r) for r in recs], panel_votes)
            for name, recs in by_member.items()
        },
    }


def _aligned(rows: Sequence[Record], recs: Sequence[Record]) -> list[Record]:
    """A member's records in the order of `rows` (an item the member has no record for: an error record)."""
    have = {r.id: r for r in recs}
    return [have.get(r.id) or replace(r, status="error", result=None, members=None) for r in rows]


def _metric_fn(spec: TaskSpec) -> Any:
    return accuracy if spec.metric == "accuracy" else CORRELATIONS[spec.metric]


def _value(entry: dict[str, Any]) -> float:
    value = entry.get("value")
    return float("-inf") if value is None else float(value)


def _scored(
    fn: Any, preds: list[Any], golds: list[Any], n_resamples: int, seed: int, rows: Sequence[Record]
) -> dict[str, Any]:
    """The metric over labelled items with a bootstrap CI (as summarize's `overall`) and the item counts."""
    keep = [i for i, g in enumerate(golds) if g is not None]
    p, g = [preds[i] for i in keep], [golds[i] for i in keep]
    result = fn(p, g)
    if n_resamples and result.n >= MIN_CI_ITEMS:
        result = bootstrap_ci(fn, p, g, n_resamples=n_resamples, seed=seed)
    counts = item_counts([rows[i] for i in keep]) if rows else {}
    return result.to_dict() | {"counts": counts}


def _rules(
    rows: Sequence[Record],
    by_member: dict[str, list[Record]],
    spec: TaskSpec,
    golds: list[Any],
    seed: int,
    folds: int,
) -> dict[str, tuple[list[Any], dict[str, Any]]]:
    """Each rule's predictions per item, with what the rule adds to its entry (the stack's weights)."""
    details = [(r.result.details.get("panel") or {}) if r.result is not None else {} for r in rows]
    headline = [prediction(r) for r in rows]
    if spec.mode == "pairwise":
        mean = [d.get("mean_verdict") for d in details]
        stacked, extra = stack_pairwise(
            _features(by_member, pairwise=True), golds, _tie_band(details), seed, folds
        )
        return {"majority": (headline, {}), "mean": (mean, {}), "stacked": (stacked, extra)}
    majority = [
        None if h is None else (d["outcome"] if isinstance(d.get("outcome"), int | float) else h)
        for h, d in zip(headline, details, strict=True)
    ]
    stacked, extra = stack_pointwise(_features(by_member, pairwise=False), golds, seed, folds)
    return {"mean": (headline, {}), "majority": (majority, {}), "stacked": (stacked, extra)}


def _tie_band(details: Sequence[dict[str, Any]]) -> float:
    return next((float(d["tie_band"]) for d in details if d.get("tie_band") is not None), 0.0)


def _features(by_member: dict[str, list[Record]], *, pairwise: bool) -> tuple[list[str], np.ndarray]:
    """Items x members: pairwise each member's p(A) - 0.5 (0 where it gave no verdict), pointwise its score
    (NaN where it gave none)."""
    from cejudge_dspy.judges.panel import MemberOutcome

    names = list(by_member)
    columns = []
    for name in names:
        col = []
        for r in by_member[name]:
            outcome = MemberOutcome(name, r.status, r.result)
            if pairwise:
                p = outcome.p_a()
                col.append(0.0 if p is None else p - 0.5)
            else:
                v = outcome.vote()
                col.append(float("nan") if v is None else float(v))
        columns.append(col)
    return names, np.asarray(columns, dtype=float).T.reshape(len(columns[0]) if columns else 0, len(names))


def _fold_of(n: int, folds: int, seed: int) -> np.ndarray:
    """Each item's fold (items in id order): a seeded permutation dealt round-robin."""
    order = np.random.default_rng(seed).permutation(n)
    fold = np.empty(n, dtype=int)
    fold[order] = np.arange(n) % folds
    return fold


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = STACK_L2) -> np.ndarray:
    """[intercept, weights...] of an L2-penalised logistic regression of y (0/1) on x (items x features),
    the intercept unpenalised; minimised with scipy's L-BFGS on the exact gradient."""
    design = np.column_stack([np.ones(len(x)), x])
    penalty = np.r_[0.0, np.full(x.shape[1], l2)]

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = design @ w
        value = float(np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * np.sum(penalty * w * w))
        grad = design.T @ (1.0 / (1.0 + np.exp(-z)) - y) + penalty * w
        return value, grad

    from scipy import optimize  # here: scipy takes a second to import, and only a stacked panel fits

    return optimize.minimize(loss, np.zeros(design.shape[1]), jac=True, method="L-BFGS-B").x


def stack_pairwise(
    features: tuple[list[str], np.ndarray],
    golds: Sequence[Any],
    tie_band: float,
    seed: int,
    folds: int = STACK_FOLDS,
) -> tuple[list[Any], dict[str, Any]]:
    """Cross-validated stacked verdicts (see the module docstring) and {weights, folds} or {reason}."""
    names, x = features
    y = np.array([1.0 if g == "A" else 0.0 if g == "B" else np.nan for g in golds])
    train = ~np.isnan(y)
    k = min(folds, int(train.sum()))
    if k < 2 or len(set(y[train])) < 2:
        return [None] * len(golds), {"reason": "needs labelled items of both sides in at least 2 folds"}
    fold = _fold_of(len(golds), k, seed)
    preds: list[Any] = [None] * len(golds)
    for f in range(k):
        fit = train & (fold != f)
        if len(set(y[fit])) < 2:
            continue  # this fold's items stay unscored: the others hold one side only
        w = fit_logistic(x[fit], y[fit])
        for i in np.flatnonzero(fold == f):
            p = 1.0 / (1.0 + np.exp(-(w[0] + x[i] @ w[1:])))
            preds[i] = verdict_from_preference(float(p), tie_band)
    w = fit_logistic(x[train], y[train])
    return preds, {
        "folds": k,
        "intercept": float(w[0]),
        "weights": dict(zip(names, map(float, w[1:]), strict=True)),
    }


def fit_linear(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """[intercept, weights...] of least squares of y on x (numpy's lstsq)."""
    return np.linalg.lstsq(np.column_stack([np.ones(len(x)), x]), y, rcond=None)[0]


def stack_pointwise(
    features: tuple[list[str], np.ndarray], golds: Sequence[Any], seed: int, folds: int = STACK_FOLDS
) -> tuple[list[Any], dict[str, Any]]:
    """Cross-validated stacked scores: least squares on items every member scored (others: unscored)."""
    names, x = features
    y = np.array(
        [float(g) if isinstance(g, int | float) and not isinstance(g, bool) else np.nan for g in golds]
    )
    complete = ~np.isnan(x).any(axis=1) if x.size else np.zeros(len(golds), dtype=bool)
    train = complete & ~np.isnan(y)
    k = min(folds, int(train.sum()))
    if k < 2 or train.sum() <= x.shape[1] + 1:
        return [None] * len(golds), {"reason": "too few labelled items scored by every member"}
    fold = _fold_of(len(golds), k, seed)
    preds: list[Any] = [None] * len(golds)
    for f in range(k):
        w = fit_linear(x[train & (fold != f)], y[train & (fold != f)])
        for i in np.flatnonzero((fold == f) & complete):
            preds[i] = float(w[0] + x[i] @ w[1:])
    w = fit_linear(x[train], y[train])
    return preds, {
        "folds": k,
        "intercept": float(w[0]),
        "weights": dict(zip(names, map(float, w[1:]), strict=True)),
    }


def _paired_test(
    spec: TaskSpec, preds: list[Any], best: list[Any], golds: list[Any], n_resamples: int, seed: int
) -> dict[str, Any]:
    """A rule against the best member on the same items: McNemar (accuracy) or the paired bootstrap."""
    if spec.metric == "accuracy":

        def right(p: Any, g: Any) -> bool | None:
            if p is None or g is None or str(g).lower() == "tie":
                return None
            return str(p).upper() == str(g).upper()

        return mcnemar(
            [right(p, g) for p, g in zip(preds, golds, strict=True)],
            [right(b, g) for b, g in zip(best, golds, strict=True)],
        ).to_dict()
    fn = CORRELATIONS[spec.metric]
    diff = paired_bootstrap_diff(fn, preds, best, golds, n_resamples=max(n_resamples, 1), seed=seed).to_dict()
    if not n_resamples:  # --bootstrap 0: the difference, without an interval or a p-value
        diff |= {"ci_low": None, "ci_high": None, "p_value": None, "reason": "no resamples (--bootstrap 0)"}
    return diff


def _agreement(rows: Sequence[Record], by_member: dict[str, list[Record]], spec: TaskSpec) -> dict[str, Any]:
    """Across members: kappa and alpha; per item, summarised: the share agreeing, the entropy, the spread."""
    votes = [[prediction(r) for r in recs] for recs in by_member.values()]
    details = [(r.result.details.get("panel") or {}) if r.result is not None else {} for r in rows]

    def mean(key: str) -> float | None:
        values = [float(d[key]) for d in details if d.get(key) is not None]
        return sum(values) / len(values) if values else None

    out: dict[str, Any] = {
        "krippendorff_alpha": krippendorff_alpha(
            votes, "nominal" if spec.mode == "pairwise" else "interval"
        ).to_dict(),
        "mean_agreement": mean("agreement"),
        "mean_entropy": mean("entropy"),
        "no_majority": sum(d.get("outcome") == "no majority" for d in details),
        "unanimous": sum(d.get("agreement") == 1.0 for d in details),
    }
    if spec.mode == "pairwise":
        out["fleiss_kappa"] = fleiss_kappa_from_labels(votes, categories=("A", "B", "tie")).to_dict()
    else:
        out["mean_sd"] = mean("sd")
        out["mean_range"] = mean("range")
    return out


def _against(spec: TaskSpec, member: list[Any], panel: list[Any]) -> dict[str, Any]:
    """A member against the panel's headline: the share of items it agrees on (pairwise) or Kendall's tau."""
    if spec.mode == "pairwise":
        return accuracy(member, panel, include_gold_ties=True).to_dict()
    return CORRELATIONS["kendall"](member, panel).to_dict()
