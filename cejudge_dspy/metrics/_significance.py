"""Significance and uncertainty for meta-metrics: bootstrap CIs, paired differences, McNemar.

All functions follow the conventions of `cejudge_dspy.metrics._measures` (missing = None/NaN, excluded and
counted; results are `MetricResult`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from cejudge_dspy.errors import InputError
from cejudge_dspy.metrics._correlations import (
    kendall_tau,
    kendalltau,
    pearson,
    pearsonr,
    scipy_stat,
    spearman,
    spearmanr,
)
from cejudge_dspy.metrics._measures import accuracy, strict_accuracy
from cejudge_dspy.metrics._result import (
    MetricResult,
    check_aligned,
    is_missing,
    normalize_label,
    undefined_result,
)


def _value_of(result: MetricResult | float) -> float:
    return result.value if isinstance(result, MetricResult) else float(result)


def _object_columns(arrays: Sequence[Sequence[Any]]) -> list[np.ndarray]:
    lists = check_aligned(arrays, [f"arrays[{i}]" for i in range(len(arrays))])
    cols = []
    for a in lists:
        col = np.empty(len(a), dtype=object)  # object dtype keeps None and labels as they are
        col[:] = a
        cols.append(col)
    return cols


def _accuracy_rows(preds: Sequence[Any], golds: Sequence[Any], idx: np.ndarray) -> np.ndarray:
    """`accuracy(preds[row], golds[row]).value` for every row of `idx` at once (gold ties excluded)."""
    scored = np.zeros(len(preds), dtype=bool)
    correct = np.zeros(len(preds), dtype=bool)
    for i, (p, g) in enumerate(zip(preds, golds, strict=True)):
        if is_missing(p) or is_missing(g):
            continue
        gold = normalize_label(g, item=i, field="golds")
        scored[i] = gold != "tie"
        correct[i] = scored[i] and normalize_label(p, item=i, field="preds") == gold
    n = scored[idx].sum(axis=1)
    hits = correct[idx].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, hits / np.maximum(n, 1), np.nan)


def _strict_accuracy_rows(preds: Sequence[Any], golds: Sequence[Any], idx: np.ndarray) -> np.ndarray:
    """`strict_accuracy(preds[row], golds[row]).value` for every row of `idx`: its fill of an unparsed
    verdict with a wrong one depends only on the item's own gold, so fill once, then `_accuracy_rows`."""
    filled = [
        ("B" if normalize_label(g, item=i, field="golds") == "A" else "A")
        if is_missing(p) and not is_missing(g)
        else p
        for i, (p, g) in enumerate(zip(preds, golds, strict=True))
    ]
    return _accuracy_rows(filled, golds, idx)


binomtest = scipy_stat("binomtest")


def _correlation_rows(
    fn: Callable[..., Any],
) -> Callable[[Sequence[Any], Sequence[Any], np.ndarray], np.ndarray]:
    """Per row of `idx`, the correlation the metric function computes: the same scipy call on the same
    floats in the same order, without rebuilding Python lists per resample."""

    def rows(x: Sequence[Any], y: Sequence[Any], idx: np.ndarray) -> np.ndarray:
        valid = np.array(
            [not (is_missing(a) or is_missing(b)) for a, b in zip(x, y, strict=True)], dtype=bool
        )
        xf = np.array([float(a) if ok else np.nan for a, ok in zip(x, valid, strict=True)])
        yf = np.array([float(b) if ok else np.nan for b, ok in zip(y, valid, strict=True)])
        out = np.full(len(idx), np.nan)
        for k, row in enumerate(idx):
            kept = row[valid[row]]
            if kept.size < 2:
                continue
            xs, ys = xf[kept], yf[kept]
            if (xs == xs[0]).all() or (ys == ys[0]).all():
                continue  # constant side: the metric is undefined (NaN), as `_correlation` says
            out[k] = float(fn(xs, ys).statistic)
        return out

    return rows


# Metrics whose resampled values are computed without calling the metric per resample. Values are the
# ones the metric would give (accuracies exactly; correlations through the same scipy function).
_RESAMPLED: dict[Callable[..., Any], Callable[[Sequence[Any], Sequence[Any], np.ndarray], np.ndarray]] = {
    accuracy: _accuracy_rows,
    strict_accuracy: _strict_accuracy_rows,
    kendall_tau: _correlation_rows(kendalltau),
    spearman: _correlation_rows(spearmanr),
    pearson: _correlation_rows(pearsonr),
}


def _resampled_values(
    metric_fn: Callable[..., Any], arrays: Sequence[Sequence[Any]], idx: np.ndarray
) -> np.ndarray:
    """`metric_fn` on every resample (a row of item indices in `idx`), as an array of floats."""
    fast = _RESAMPLED.get(metric_fn)
    if fast is not None and len(arrays) == 2:
        return fast(arrays[0], arrays[1], idx)
    cols = _object_columns(arrays)
    return np.array([_value_of(metric_fn(*(c[row].tolist() for c in cols))) for row in idx])


def _percentile_ci(values: np.ndarray, confidence: float) -> tuple[float | None, float | None]:
    finite = values[~np.isnan(values)]
    if finite.size == 0:
        return None, None
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)


def check_bootstrap_args(n_resamples: int, confidence: float) -> None:
    if n_resamples < 1:
        raise InputError(f"must be >= 1, got {n_resamples}", field="n_resamples")
    if not 0 < confidence < 1:
        raise InputError(f"must be in (0, 1), got {confidence}", field="confidence")


def bootstrap_ci(
    metric_fn: Callable[..., MetricResult | float],
    *arrays: Sequence[Any],
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 42,
) -> MetricResult:
    """Attach a paired percentile-bootstrap CI to ``metric_fn(*arrays)``.

    Shapes: ``arrays`` are equal-length sequences aligned by item (e.g. ``preds, golds``, or one
    sequence per rater for an agreement metric). Each resample draws item indices with replacement
    and applies them to every array, so pairs stay together. Missing values are resampled as they are
    and the metric excludes them, so the CI also reflects the variability of the unparsed rate.
    Resamples whose value is undefined (e.g. a constant resample for tau) are left out of the
    percentiles and counted in ``extra["n_resamples_undefined"]``. Pass options with a lambda or
    `functools.partial`. Deterministic for a given ``seed``; no CI when the point value is undefined.
    """
    check_bootstrap_args(n_resamples, confidence)
    if not arrays:
        raise InputError("needs at least one item-aligned sequence to resample", field="arrays")
    lists = check_aligned(arrays, [f"arrays[{i}]" for i in range(len(arrays))])
    return with_bootstrap_ci(metric_fn(*arrays), metric_fn, lists, n_resamples, confidence, seed)


def with_bootstrap_ci(
    point: MetricResult | float,
    metric_fn: Callable[..., MetricResult | float],
    lists: list[list[Any]],
    n_resamples: int,
    confidence: float,
    seed: int,
) -> MetricResult:
    """`bootstrap_ci` for a point value already computed (`metric_fn` on `lists`, checked and aligned):
    a summary computes each point value once, for its row, and its interval from there."""
    n = len(lists[0])
    if not isinstance(point, MetricResult):
        point = MetricResult(getattr(metric_fn, "__name__", "metric"), float(point), n)
    if not point.defined or n == 0:
        return point
    idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    vals = _resampled_values(metric_fn, lists, idx)
    low, high = _percentile_ci(vals, confidence)
    extra = dict(point.extra) | {
        "n_resamples": n_resamples,
        "n_resamples_undefined": int(np.isnan(vals).sum()),
    }
    return replace(point, ci_low=low, ci_high=high, extra=extra)


def paired_bootstrap_diff(
    metric_fn: Callable[..., MetricResult | float],
    preds_a: Sequence[Any],
    preds_b: Sequence[Any],
    golds: Sequence[Any],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 42,
) -> MetricResult:
    """Difference ``metric_fn(preds_a, golds) - metric_fn(preds_b, golds)`` with a paired bootstrap CI.

    Meant for correlation metrics (tau, rho), where McNemar does not apply. Items where either judge's
    output or the gold is missing are excluded (and counted) so both judges are scored on the same
    items. The two-sided p-value is the percentile-bootstrap one, ``2 * min(P*(d <= 0), P*(d >= 0))``
    (capped at 1); resamples where either metric is undefined are dropped and counted.
    """
    check_bootstrap_args(n_resamples, confidence)
    a, b, g = check_aligned([preds_a, preds_b, golds], ["preds_a", "preds_b", "golds"])
    keep = [i for i in range(len(g)) if not any(is_missing(v[i]) for v in (a, b, g))]
    a, b, g = ([v[i] for i in keep] for v in (a, b, g))
    n, n_excluded = len(keep), len(golds) - len(keep)

    name = f"{getattr(metric_fn, '__name__', 'metric')}_diff"
    point = _value_of(metric_fn(a, g)) - _value_of(metric_fn(b, g))
    if math.isnan(point):
        return undefined_result(name, n, n_excluded, "metric undefined for one of the judges")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_resamples, n))
    vals = _resampled_values(metric_fn, [a, g], idx) - _resampled_values(metric_fn, [b, g], idx)
    low, high = _percentile_ci(vals, confidence)
    finite = vals[~np.isnan(vals)]
    p = min(1.0, 2 * min(float(np.mean(finite <= 0)), float(np.mean(finite >= 0))))
    extra = {"n_resamples": n_resamples, "n_resamples_undefined": int(vals.size - finite.size)}
    return MetricResult(name, point, n, n_excluded, low, high, p_value=p, extra=extra)


def mcnemar(correct_a: Sequence[object], correct_b: Sequence[object]) -> MetricResult:
    """Exact (binomial) McNemar test comparing two judges scored on the same items.

    Shapes: two equal-length sequences of booleans (True = that judge got the item right); an item
    that is None/NaN on either side is excluded and counted. ``extra["b"]`` counts items only judge A
    got right, ``extra["c"]`` items only judge B got right; the two-sided p-value is
    ``binomtest(b, b + c, 0.5)`` (1.0 when ``b + c == 0``). ``value`` is the accuracy difference
    ``acc_a - acc_b == (b - c) / n`` so a table can show the effect next to its p-value.
    """
    xa, xb = check_aligned([correct_a, correct_b], ["correct_a", "correct_b"])
    pairs = []
    for i, (x, y) in enumerate(zip(xa, xb, strict=True)):
        if is_missing(x) or is_missing(y):
            continue
        for name, v in (("correct_a", x), ("correct_b", y)):
            if v not in (True, False):  # True/False/1/0 pass; "yes" or 2 do not
                raise InputError(f"expected a boolean, got {v!r}", item=str(i), field=name)
        pairs.append((bool(x), bool(y)))
    n, n_excluded = len(pairs), len(xa) - len(pairs)
    b = sum(x and not y for x, y in pairs)
    c = sum(y and not x for x, y in pairs)
    extra = {"b": b, "c": c, "n_both_right": sum(x and y for x, y in pairs)}
    if n == 0:
        return undefined_result("mcnemar", 0, n_excluded, "no item scored for both judges", **extra)
    p = 1.0 if b + c == 0 else float(binomtest(b, b + c, 0.5).pvalue)
    return MetricResult("mcnemar", (b - c) / n, n, n_excluded, p_value=p, extra=extra)
