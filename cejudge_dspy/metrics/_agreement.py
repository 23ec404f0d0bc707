"""Inter-rater agreement: Krippendorff's alpha and Fleiss' kappa.

Used to check how reliable the gold labels (or several judge runs) are among themselves. Neither
statistic is in scipy, so both are implemented here from their textbook definitions. Missing
ratings are None/NaN, as everywhere in `cejudge_dspy.metrics._measures`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import Literal

import numpy as np

from cejudge_dspy.errors import InputError
from cejudge_dspy.metrics._result import MetricResult, is_missing, undefined_result

AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]


def _rater_rows(ratings: Sequence[Sequence[object]], field: str) -> list[list[object]]:
    rows = [list(r) for r in ratings]
    if not rows:
        raise InputError("needs at least one rater (a list of lists, raters x units)", field=field)
    for i, row in enumerate(rows):
        if len(row) != len(rows[0]):
            raise InputError(
                f"rater {i} rated {len(row)} units, rater 0 rated {len(rows[0])}; pad with None",
                field=field,
            )
    return rows


def _delta2(level: AlphaLevel, values: list[object], n_c: np.ndarray) -> np.ndarray:
    """Squared difference function delta^2(c, k) of Krippendorff (2011), over the sorted domain."""
    if level == "nominal":
        return 1.0 - np.eye(len(values))
    if level == "ordinal":
        # delta^2 = (sum_{g=c..k} n_g - (n_c + n_k)/2)^2, with n_g the coincidence-matrix marginals:
        # ranks are spaced by how often the values in between were used, not by their labels.
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        idx = np.arange(len(values))
        lo, hi = np.minimum.outer(idx, idx), np.maximum.outer(idx, idx)
        between = cum[hi + 1] - cum[lo]
        return (between - (n_c[:, None] + n_c[None, :]) / 2) ** 2
    v = np.array(values, dtype=float)
    if level == "interval":
        return (v[:, None] - v[None, :]) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):  # 0/0 only on the diagonal at value 0
        d = ((v[:, None] - v[None, :]) / (v[:, None] + v[None, :])) ** 2
    return np.nan_to_num(d)


def krippendorff_alpha(ratings: Sequence[Sequence[object]], level: AlphaLevel = "nominal") -> MetricResult:
    """Krippendorff's alpha from the coincidence-matrix definition (Krippendorff 2011).

    Shapes: ``ratings`` is raters x units (one list per rater, all the same length); None/NaN is a
    missing rating. Nominal values may be any hashable labels; ordinal values must sort in their
    intended order (use numbers); interval and ratio values must be numeric.

    alpha = 1 - D_o / D_e, where D_o is the disagreement observed within units and D_e the
    disagreement expected from the pooled values. Only units with at least 2 ratings are pairable:
    ``n`` counts them, ``n_excluded`` counts the others, ``extra["n_values"]`` is the number of
    pairable values (n.. in the paper) and ``extra["n_missing"]`` the missing ratings.
    No variation (every pairable value equal) makes D_e = 0 and alpha = 0/0: following Krippendorff
    (and the ``krippendorff`` package, which refuses such data) the value is NaN with a reason, not 1.0.
    """
    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise InputError(f"unknown level {level!r}; use nominal, ordinal, interval or ratio", field="level")
    name = f"krippendorff_alpha_{level}"  # the level changes the number; keep it visible in tables
    rows = _rater_rows(ratings, "ratings")
    n_missing = sum(is_missing(v) for row in rows for v in row)
    units = [[row[u] for row in rows if not is_missing(row[u])] for u in range(len(rows[0]))]
    pairable = [vals for vals in units if len(vals) >= 2]
    n_units, n_excluded = len(pairable), len(units) - len(pairable)
    if level in ("interval", "ratio"):
        try:
            pairable = [[float(v) for v in vals] for vals in pairable]  # type: ignore[arg-type]
        except (TypeError, ValueError) as exc:
            raise InputError(f"{level} alpha needs numeric ratings ({exc})", field="ratings") from None
    if not pairable:
        return undefined_result(name, 0, n_excluded, "no unit has 2 or more ratings")
    seen = list(dict.fromkeys(v for vals in pairable for v in vals))
    domain = seen if level == "nominal" else sorted(seen)  # type: ignore[type-var]
    index = {v: i for i, v in enumerate(domain)}
    # Coincidence matrix: every ordered pair of values within a unit, weighted 1/(m_u - 1) so that
    # each unit contributes exactly m_u pairable values.
    o = np.zeros((len(domain), len(domain)))
    for vals in pairable:
        counts = np.zeros(len(domain))
        for v, k in Counter(vals).items():
            counts[index[v]] = k
        o += (np.outer(counts, counts) - np.diag(counts)) / (len(vals) - 1)
    n_c = o.sum(axis=1)
    n_total = float(n_c.sum())
    extra = {"n_values": int(round(n_total)), "n_missing": n_missing, "n_raters": len(rows)}
    delta2 = _delta2(level, domain, n_c)
    d_expected = float((np.outer(n_c, n_c) * delta2).sum()) / (n_total - 1)
    if len(domain) < 2 or d_expected == 0:
        return undefined_result(
            name, n_units, n_excluded, "no variation: all pairable ratings are equal", **extra
        )
    alpha = 1.0 - float((o * delta2).sum()) / d_expected
    return MetricResult(name, alpha, n_units, n_excluded, extra=extra)


def fleiss_kappa(counts: Sequence[Sequence[float]]) -> MetricResult:
    """Fleiss' kappa for a fixed number of raters per unit.

    Shapes: ``counts`` is units x categories; ``counts[i][j]`` is how many raters put unit i in
    category j. Every row must sum to the same number of raters n >= 2 (an `InputError` otherwise);
    counts are non-negative integers with no missing values (use `fleiss_kappa_from_labels` for
    labels with gaps). kappa = (P_bar - P_e) / (1 - P_e). Undefined (NaN) with no units, with fewer
    than 2 raters, or when every rating falls in one category (P_e = 1, so 0/0).
    """
    arr = np.asarray(counts, dtype=float)
    if arr.ndim != 2:
        raise InputError("must be a units x categories table of counts", field="counts")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise InputError("counts must be non-negative integers without missing values", field="counts")
    n_units, n_categories = arr.shape
    if n_units == 0:
        return undefined_result("fleiss_kappa", 0, 0, "no units")
    raters = arr.sum(axis=1)
    bad = np.flatnonzero(raters != raters[0])
    if bad.size:
        raise InputError(
            f"has {int(raters[bad[0]])} ratings, unit 0 has {int(raters[0])}; Fleiss' kappa needs the "
            "same number of raters per unit",
            item=f"unit {int(bad[0])}",
            field="counts",
        )
    n = float(raters[0])
    extra: dict[str, int | float] = {"n_raters": int(n), "n_categories": n_categories}
    if n < 2:
        return undefined_result("fleiss_kappa", n_units, 0, "fewer than 2 raters per unit", **extra)
    p_j = arr.sum(axis=0) / (n_units * n)
    p_i = ((arr**2).sum(axis=1) - n) / (n * (n - 1))  # agreeing rater pairs / all rater pairs, per unit
    p_bar, p_e = float(p_i.mean()), float((p_j**2).sum())
    extra |= {"p_observed": p_bar, "p_expected": p_e}
    if np.isclose(p_e, 1.0):
        return undefined_result(
            "fleiss_kappa", n_units, 0, "no variation: all ratings in one category", **extra
        )
    return MetricResult("fleiss_kappa", (p_bar - p_e) / (1 - p_e), n_units, 0, extra=extra)


def fleiss_kappa_from_labels(
    labels: Sequence[Sequence[Hashable | None]],
    *,
    n_raters: int | None = None,
    categories: Sequence[Hashable] | None = None,
) -> MetricResult:
    """Fleiss' kappa from raw labels, raters x units, None/NaN = missing.

    Fleiss' kappa needs the same number of ratings on every unit, so only units with exactly
    ``n_raters`` non-missing labels (default: all raters) are kept; the others are dropped and counted
    in ``n_excluded``. Pass a smaller ``n_raters`` when one rater is systematically absent.
    ``categories`` fixes the category set (default: the labels seen, sorted by their string form);
    a label outside it is an `InputError`.
    """
    rows = _rater_rows(labels, "labels")
    need = len(rows) if n_raters is None else n_raters
    units = [[row[u] for row in rows if not is_missing(row[u])] for u in range(len(rows[0]))]
    kept = [vals for vals in units if len(vals) == need]
    cats = list(categories) if categories is not None else sorted({v for vals in kept for v in vals}, key=str)
    index = {c: j for j, c in enumerate(cats)}
    table = np.zeros((len(kept), len(cats)))
    for i, vals in enumerate(kept):
        for v in vals:
            if v not in index:
                raise InputError(f"label {v!r} is not one of {cats}", field="labels")
            table[i, index[v]] += 1
    if not kept:
        return undefined_result("fleiss_kappa", 0, len(units), f"no unit has exactly {need} ratings")
    result = fleiss_kappa(table)
    return replace(result, n_excluded=len(units) - len(kept))
