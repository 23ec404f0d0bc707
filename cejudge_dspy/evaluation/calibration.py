"""Calibration of pairwise confidence, and the tie band chosen on dev data.

A probability verdict leans to A when p(A) > 0.5; its confidence is max(p(A), 1 - p(A)), in [0.5, 1].
A well-calibrated judge is right on 70% of the items it gives confidence 0.7. `reliability_table` bins
the confidences (equal widths over [0.5, 1]) and reports per bin the items, their mean confidence and
their accuracy; `expected_calibration_error` is the item-weighted mean gap |accuracy - confidence|.
Items with a gold tie or without a probability are left out.

`choose_tie_band` picks the tie band's width on dev data: the candidate with the best accuracy (a tie
verdict is wrong against a gold A or B, as in `metrics.accuracy`), the narrowest on a draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cejudge_dspy.probabilities import confidence, verdict_from_preference

TIE_BAND_CANDIDATES = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3)


def _pairs(p_as: Sequence[float | None], golds: Sequence[Any]) -> list[tuple[float, bool]]:
    """(confidence, whether the side p(A) leans to is the gold one) for the usable items."""
    out = []
    for p, gold in zip(p_as, golds, strict=True):
        g = str(gold).strip().upper() if gold is not None else None
        if p is None or g not in ("A", "B") or p == 0.5:
            continue
        out.append((confidence(p), ("A" if p > 0.5 else "B") == g))
    return out


def reliability_table(
    p_as: Sequence[float | None], golds: Sequence[Any], n_bins: int = 5
) -> list[dict[str, Any]]:
    """One row per confidence bin over [0.5, 1]: `low`, `high`, `n`, `confidence` (mean), `accuracy`."""
    pairs = _pairs(p_as, golds)
    width = 0.5 / n_bins
    rows = []
    for b in range(n_bins):
        low, high = 0.5 + b * width, 0.5 + (b + 1) * width
        inside = [(c, ok) for c, ok in pairs if low <= c < high or (b == n_bins - 1 and c == high)]
        rows.append(
            {
                "low": round(low, 6),
                "high": round(high, 6),
                "n": len(inside),
                "confidence": sum(c for c, _ in inside) / len(inside) if inside else None,
                "accuracy": sum(ok for _, ok in inside) / len(inside) if inside else None,
            }
        )
    return rows


def expected_calibration_error(
    p_as: Sequence[float | None], golds: Sequence[Any], n_bins: int = 5
) -> float | None:
    """Sum over bins of (bin items / all items) * |accuracy - mean confidence|; None without items."""
    rows = reliability_table(p_as, golds, n_bins)
    total = sum(r["n"] for r in rows)
    if not total:
        return None
    return sum(r["n"] / total * abs(r["accuracy"] - r["confidence"]) for r in rows if r["n"])


def choose_tie_band(
    p_as: Sequence[float | None], golds: Sequence[Any], candidates: Sequence[float] = TIE_BAND_CANDIDATES
) -> dict[str, Any]:
    """The tie band with the best accuracy against gold A/B labels on these items, and every candidate's."""
    usable = [
        (p, str(g).strip().upper())
        for p, g in zip(p_as, golds, strict=True)
        if p is not None and g is not None
    ]
    usable = [(p, g) for p, g in usable if g in ("A", "B")]
    if not usable:
        return {"tie_band": None, "n": 0, "accuracy": {}}
    accuracy = {
        band: sum(verdict_from_preference(p, band) == g for p, g in usable) / len(usable)
        for band in candidates
    }
    best = max(
        sorted(candidates), key=lambda band: accuracy[band]
    )  # max keeps the first, narrowest, on a draw
    return {"tie_band": best, "n": len(usable), "accuracy": accuracy}


def calibration_summary(
    p_as: Sequence[float | None], golds: Sequence[Any], n_bins: int = 5
) -> dict[str, Any]:
    return {
        "n": len(_pairs(p_as, golds)),
        "ece": expected_calibration_error(p_as, golds, n_bins),
        "reliability": reliability_table(p_as, golds, n_bins),
        "tie_band_on_these_items": choose_tie_band(p_as, golds),
    }
