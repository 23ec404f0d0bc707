"""Calibration of pairwise confidence, and the tie band chosen on dev data.

A probability verdict leans to A when p(A) > 0.5; its confidence is max(p(A), 1 - p(A)), in [0.5, 1].
A well-calibrated judge is right on 70% of the items it gives confidence 0.7. `reliability_table` bins
the confidences (equal widths over [0.5, 1]) and reports per bin the items, their mean confidence and
their accuracy; `expected_calibration_error` is the item-weighted mean gap |accuracy - confidence|.
Items with a gold tie or without a probability are left out.

`choose_tie_band` picks the tie band's width on dev data. Its criterion is **accuracy with ties**
(`metrics.accuracy(include_gold_ties=True)`): a gold tie is right only by a tie verdict, a tie verdict
is wrong against a gold A or B. Without gold ties a band could only turn right answers into ties, so
band 0 would always win; with them, widening the band gains the gold ties whose p(A) lies near 0.5 and
loses the A/B items there. The best of the candidates wins, the narrowest on a draw. The choice is made
on the items it is scored on, so its gain over another band is optimistic: confirm it on held-out items.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cejudge_dspy.judges.verdicts import DEFAULT_TIE_BAND, confidence, verdict_from_preference
from cejudge_dspy.metrics._measures import accuracy
from cejudge_dspy.metrics._result import is_missing
from cejudge_dspy.metrics._significance import mcnemar
from cejudge_dspy.runs import Record

TIE_BAND_CANDIDATES = tuple(round(0.01 * i, 2) for i in range(51))  # 0 to 0.5 by 0.01
_LABELS = {"A": "A", "B": "B", "TIE": "tie"}


def _gold(value: Any) -> str | None:
    return _LABELS.get(value.strip().upper()) if isinstance(value, str) else None


def preferences(records: Sequence[Record]) -> tuple[list[float | None], list[Any]]:
    """(p(A), gold label) per record, aligned: p(A) is None where the record has no usable probability
    (unparsed, error, a backbone without logprobs, a verdict token not found)."""
    p_as, golds = [], []
    for r in records:
        probs = r.result.probabilities if r.result is not None and r.status == "ok" else None
        p_as.append(probs.p_a if probs is not None and probs.ok else None)
        golds.append(r.item.label if not isinstance(r.item.label, dict) else None)
    return p_as, golds


def recorded_tie_band(records: Sequence[Record]) -> float:
    """The tie band the records' probability verdicts were decided with (the default when none say)."""
    bands = {
        r.result.probabilities.tie_band
        for r in records
        if r.result is not None and r.result.probabilities is not None and r.result.probabilities.ok
    }
    bands.discard(None)
    return float(bands.pop()) if len(bands) == 1 else DEFAULT_TIE_BAND


def _pairs(p_as: Sequence[float | None], golds: Sequence[Any]) -> list[tuple[float, bool]]:
    """(confidence, whether the side p(A) leans to is the gold one) for the usable items."""
    out = []
    for p, gold in zip(p_as, golds, strict=True):
        g = _gold(gold)
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
    p_as: Sequence[float | None],
    golds: Sequence[Any],
    candidates: Sequence[float] = TIE_BAND_CANDIDATES,
    *,
    against: float = DEFAULT_TIE_BAND,
) -> dict[str, Any]:
    """The candidate band with the best accuracy with ties on these items (see the module docstring).

    Returns `tie_band` (None without usable items), `n` (items with p(A) and a gold A, B or tie),
    `n_gold_ties`, one row per candidate (`tie_band`, `accuracy_with_ties`, `accuracy` over gold A/B
    only as `metrics.accuracy` reports it, `ties` = tie verdicts), and `against`: the chosen band
    against band `against` (the default) on the same items, McNemar's exact test on per-item
    correctness with ties (optimistic: the band was chosen on these items)."""
    usable = [(p, g) for p, gold in zip(p_as, golds, strict=True) if not is_missing(p) and (g := _gold(gold))]
    bands = sorted(set(candidates) | {against})
    out: dict[str, Any] = {
        "criterion": "accuracy with ties",
        "n": len(usable),
        "n_gold_ties": sum(g == "tie" for _, g in usable),
    }
    if not usable:
        return {**out, "tie_band": None, "candidates": [], "against": None}
    gold = [g for _, g in usable]
    verdicts = {band: [verdict_from_preference(p, band) for p, _ in usable] for band in bands}
    rows = [
        {
            "tie_band": band,
            "accuracy_with_ties": accuracy(verdicts[band], gold, include_gold_ties=True).value,
            "accuracy": _value(accuracy(verdicts[band], gold)),
            "ties": verdicts[band].count("tie"),
        }
        for band in bands
    ]
    best = max(  # max keeps the first, narrowest, on a draw
        (r for r in rows if r["tie_band"] in candidates), key=lambda r: r["accuracy_with_ties"]
    )
    right = {band: [v == g for v, g in zip(verdicts[band], gold, strict=True)] for band in bands}
    test = mcnemar(right[best["tie_band"]], right[against])
    return {
        **out,
        "tie_band": best["tie_band"],
        "accuracy_with_ties": best["accuracy_with_ties"],
        "candidates": rows,
        "against": {
            "tie_band": against,
            "accuracy_with_ties": next(r["accuracy_with_ties"] for r in rows if r["tie_band"] == against),
            "difference": test.value,
            "p_value": test.p_value,
            "only_chosen_right": test.extra.get("b"),
            "only_against_right": test.extra.get("c"),
        },
    }


def _value(result: Any) -> float | None:
    return None if not result.defined else result.value


def calibration_summary(
    p_as: Sequence[float | None], golds: Sequence[Any], n_bins: int = 5, *, against: float = DEFAULT_TIE_BAND
) -> dict[str, Any]:
    return {
        "n": len(_pairs(p_as, golds)),
        "ece": expected_calibration_error(p_as, golds, n_bins),
        "reliability": reliability_table(p_as, golds, n_bins),
        "tie_band_on_these_items": choose_tie_band(p_as, golds, against=against),
    }


def calibrate_run(records: Sequence[Record], n_bins: int = 5) -> dict[str, Any]:
    """`calibration_summary` of a pairwise run's records (latest per item), against the tie band they
    were decided with, plus how many records had probabilities (`ok`, `unavailable`, `not_located`)."""
    latest = list({r.id: r for r in records}.values())
    statuses: dict[str, int] = {}
    for r in latest:
        if r.result is not None and r.status == "ok":
            key = r.result.probabilities.status if r.result.probabilities else "none"
            statuses[key] = statuses.get(key, 0) + 1
    return {
        "n_records": len(latest),
        "probabilities": dict(sorted(statuses.items())),
        "recorded_tie_band": recorded_tie_band(latest),
        **calibration_summary(*preferences(latest), n_bins, against=recorded_tie_band(latest)),
    }
