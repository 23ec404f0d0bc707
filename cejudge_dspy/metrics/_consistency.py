"""Whether a verdict survives the language: one judge's outputs on the original items against its outputs
on the same items rendered in another language, and two judges compared on that.

Inputs are item-aligned sequences of predictions (a pairwise verdict or a pointwise score; None where the
judge gave none), the conventions of _result.py: an item missing on either side is excluded and counted.
Pairwise: the flip rate, the share of items whose verdict changed. Pointwise: the mean absolute score
change and Kendall's tau between the two score lists. `paired_consistency` asks whether two judges keep
their verdicts equally often, with McNemar's exact test on kept/changed per item (_significance.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cejudge_dspy.metrics._correlations import kendall_tau
from cejudge_dspy.metrics._result import MetricResult, check_aligned, is_missing, normalize_label
from cejudge_dspy.metrics._significance import bootstrap_ci, mcnemar


def changed(original: Sequence[Any], rendered: Sequence[Any], mode: str) -> list[bool | None]:
    """Per item: True when the rendering changed the judge's output (a pairwise verdict, or a pointwise
    score), False when it kept it, None when either side has none."""
    a, b = check_aligned([original, rendered], ["original", "rendered"])
    out: list[bool | None] = []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if is_missing(x) or is_missing(y):
            out.append(None)
        elif mode == "pairwise":
            out.append(
                normalize_label(x, item=i, field="original") != normalize_label(y, item=i, field="rendered")
            )
        else:
            out.append(float(x) != float(y))
    return out


def flip_rate(original: Sequence[Any], rendered: Sequence[Any]) -> MetricResult:
    """Share of items whose pairwise verdict on the rendering differs from the one on the original
    (A for B, or either for a tie); items without a verdict on either side are excluded and counted."""
    flags = changed(original, rendered, "pairwise")
    kept = [f for f in flags if f is not None]
    n, excluded = len(kept), len(flags) - len(kept)
    if not n:
        return MetricResult("flip_rate", float("nan"), 0, excluded, reason="no item has both verdicts")
    flips = sum(kept)
    return MetricResult("flip_rate", flips / n, n, excluded, extra={"flips": flips})


def changed_rate(flags: Sequence[bool | None]) -> MetricResult:
    """Share of True among per-item flags (None excluded and counted): e.g. the items that any language
    changed."""
    kept = [bool(f) for f in flags if not is_missing(f)]
    n, excluded = len(kept), len(flags) - len(kept)
    if not n:
        return MetricResult("changed_rate", float("nan"), 0, excluded, reason="no item has both sides")
    return MetricResult("changed_rate", sum(kept) / n, n, excluded, extra={"changed": sum(kept)})


def mean_abs_change(original: Sequence[Any], rendered: Sequence[Any]) -> MetricResult:
    """Mean |score on the rendering - score on the original| over the items with both scores."""
    a, b = check_aligned([original, rendered], ["original", "rendered"])
    pairs = [(float(x), float(y)) for x, y in zip(a, b, strict=True) if not (is_missing(x) or is_missing(y))]
    n, excluded = len(pairs), len(a) - len(pairs)
    if not n:
        return MetricResult("mean_abs_change", float("nan"), 0, excluded, reason="no item has both scores")
    changes = sum(1 for x, y in pairs if x != y)
    value = sum(abs(y - x) for x, y in pairs) / n
    return MetricResult("mean_abs_change", value, n, excluded, extra={"changed": changes})


def rendering_consistency(
    original: Sequence[Any],
    rendered: Sequence[Any],
    mode: str,
    *,
    n_resamples: int = 1000,
    seed: int = 42,
) -> dict[str, MetricResult]:
    """One judge on one rendering against the original: `flip_rate` (pairwise) or `mean_abs_change` and
    `kendall` (pointwise), each with a paired percentile-bootstrap CI (none when `n_resamples` is 0)."""

    def with_ci(fn: Any) -> MetricResult:
        if n_resamples <= 0:
            return fn(original, rendered)
        return bootstrap_ci(fn, original, rendered, n_resamples=n_resamples, seed=seed)

    if mode == "pairwise":
        return {"flip_rate": with_ci(flip_rate)}
    return {"mean_abs_change": with_ci(mean_abs_change), "kendall": with_ci(kendall_tau)}


def paired_consistency(changed_a: Sequence[bool | None], changed_b: Sequence[bool | None]) -> MetricResult:
    """Do judges A and B keep their outputs across a rendering equally often? McNemar's exact test on
    kept (not changed) per item, the items both judges have on both sides; `value` is A's share kept
    minus B's (positive: A is the more consistent), `extra["b"]` the items only A kept, `extra["c"]` the
    items only B kept."""
    kept_a = [None if f is None else not f for f in changed_a]
    kept_b = [None if f is None else not f for f in changed_b]
    result = mcnemar(kept_a, kept_b)
    return MetricResult(
        "consistency_mcnemar",
        result.value,
        result.n,
        result.n_excluded,
        p_value=result.p_value,
        reason=result.reason,
        extra=dict(result.extra),
    )
