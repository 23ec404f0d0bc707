"""A judge's correlation with human scores (Kendall tau-b, Spearman, Pearson), as `MetricResult`s that
say why a value is undefined instead of passing on scipy's NaN and warning. Split from _measures.py;
`cejudge_dspy.metrics` exports these names; conventions (missing values, NaN with a reason) in _result.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cejudge_dspy.errors import InputError
from cejudge_dspy.metrics._result import MetricResult, check_aligned, is_missing, undefined_result


def _numeric_pairs(x: Sequence[object], y: Sequence[object]) -> tuple[np.ndarray, np.ndarray, int]:
    xs, ys = check_aligned([x, y], ["x", "y"])
    keep = [i for i in range(len(xs)) if not (is_missing(xs[i]) or is_missing(ys[i]))]
    out = []
    for name, vals in (("x", xs), ("y", ys)):
        try:
            out.append(np.array([float(vals[i]) for i in keep], dtype=float))  # type: ignore[arg-type]
        except (TypeError, ValueError) as exc:
            raise InputError(f"non-numeric value ({exc})", field=name) from None
    return out[0], out[1], len(xs) - len(keep)


def scipy_stat(name: str) -> Callable[..., Any]:
    """`scipy.stats.<name>`, imported when first called: scipy.stats takes about a second to import, and a
    run whose metric is accuracy (every pairwise task) never needs it, so a resumed run does not pay it."""

    def call(*args: Any, **kwargs: Any) -> Any:
        from scipy import stats

        return getattr(stats, name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


kendalltau, spearmanr, pearsonr = scipy_stat("kendalltau"), scipy_stat("spearmanr"), scipy_stat("pearsonr")


def _correlation(name: str, fn: Callable[..., Any], x: Sequence[object], y: Sequence[object]) -> MetricResult:
    xs, ys, n_excluded = _numeric_pairs(x, y)
    n = len(xs)
    if n < 2:
        return undefined_result(name, n, n_excluded, "fewer than 2 scored items")
    # scipy returns NaN plus a warning here; say which side is constant instead.
    for side, v in (("x", xs), ("y", ys)):
        if np.all(v == v[0]):
            return undefined_result(name, n, n_excluded, f"constant {side}: correlation undefined")
    res = fn(xs, ys)
    return MetricResult(name, float(res.statistic), n, n_excluded, p_value=float(res.pvalue))


def kendall_tau(x: Sequence[object], y: Sequence[object]) -> MetricResult:
    """Kendall tau-b (ties corrected) via `scipy.stats.kendalltau`, with its two-sided p-value.

    Shapes: two equal-length numeric sequences; an item missing on either side is excluded.
    Undefined (NaN, ``reason`` set) with fewer than 2 items or when either side is constant.
    """
    return _correlation("kendall_tau", kendalltau, x, y)


def spearman(x: Sequence[object], y: Sequence[object]) -> MetricResult:
    """Spearman rho via `scipy.stats.spearmanr`; same shapes and edge cases as `kendall_tau`."""
    return _correlation("spearman", spearmanr, x, y)


def pearson(x: Sequence[object], y: Sequence[object]) -> MetricResult:
    """Pearson r via `scipy.stats.pearsonr`; same shapes and edge cases as `kendall_tau`."""
    return _correlation("pearson", pearsonr, x, y)


# The correlations with humans by the names tasks and the CLI use (`metric = "spearman"`).
CORRELATIONS: dict[str, Callable[..., MetricResult]] = {
    "spearman": spearman,
    "kendall": kendall_tau,
    "pearson": pearson,
}
