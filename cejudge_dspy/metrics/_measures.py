"""Meta-metrics: how well a judge agrees with gold labels, with itself, or with another judge.

Judge-vs-gold and judge-vs-itself metrics live here; correlations with human scores (Kendall, Spearman,
Pearson) in `_correlations.py`; inter-rater agreement (Krippendorff's alpha, Fleiss' kappa) in
`_agreement.py`; bootstrap CIs, paired differences and McNemar in `_significance.py`. The result type and
the input conventions they share (aligned sequences; unparsed outputs excluded and counted, never scored;
NaN with a reason when a value is undefined; pairwise labels "A", "B", "tie") are in `_result.py`.

Importers take the public names of all of them from the package's face, `cejudge_dspy.metrics`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from cejudge_dspy.metrics._result import (
    MetricResult,
    check_aligned,
    is_missing,
    normalize_label,
    undefined_result,
)


def accuracy(
    preds: Sequence[object], golds: Sequence[object], *, include_gold_ties: bool = False
) -> MetricResult:
    """Share of pairwise verdicts equal to the gold label.

    Shapes: two equal-length sequences of ``"A"``/``"B"``/``"tie"`` (or None/NaN when unparsed).
    Ties: a predicted tie against gold A or B is wrong, and is also counted in ``extra["n_pred_ties"]``
    (predicted ties among the scored items). Gold ties are excluded by default, because a judge that
    must pick a side cannot be right on them, and counted in ``extra["n_gold_ties"]``; with
    ``include_gold_ties=True`` they are scored and only a predicted tie is right.
    Missing values are checked first, so ``n + n_excluded + n_gold_ties == len(preds)`` by default.
    Undefined (NaN) when no item is scored.
    """
    p, g = check_aligned([preds, golds], ["preds", "golds"])
    n_excluded = n_gold_ties = n_pred_ties = n_correct = n = 0
    for i, (pv, gv) in enumerate(zip(p, g, strict=True)):
        if is_missing(pv) or is_missing(gv):
            n_excluded += 1
            continue
        pl, gl = normalize_label(pv, item=i, field="preds"), normalize_label(gv, item=i, field="golds")
        if gl == "tie":
            n_gold_ties += 1
            if not include_gold_ties:
                continue
        n += 1
        n_correct += pl == gl
        n_pred_ties += pl == "tie"
    extra = {"n_correct": n_correct, "n_pred_ties": n_pred_ties, "n_gold_ties": n_gold_ties}
    if n == 0:
        return undefined_result("accuracy", 0, n_excluded, "no scored items", **extra)
    return MetricResult("accuracy", n_correct / n, n, n_excluded, extra=extra)


def strict_accuracy(
    preds: Sequence[object], golds: Sequence[object], *, include_gold_ties: bool = False
) -> MetricResult:
    """Accuracy with an unparsed verdict counted as wrong: the CE-Judge paper's definition (its
    `evaluate` compares every line, a "None" prediction included, with the gold label).

    Shapes and ties as in `accuracy`; a missing pred (None/NaN) against a present gold is scored and
    wrong, and counted in ``extra["n_unparsed"]`` (unless its gold is a tie, left out as in `accuracy`).
    A missing gold is excluded: callers pass an item that errored (a rerun retries it; it is no judge
    output) as a missing gold. So ``n`` is `accuracy`'s n plus the unparsed items, and the value equals
    `accuracy`'s when nothing is unparsed.
    """
    p, g = check_aligned([preds, golds], ["preds", "golds"])
    n_unparsed = 0
    filled: list[object] = []
    for i, (pv, gv) in enumerate(zip(p, g, strict=True)):
        if is_missing(pv) and not is_missing(gv):
            gold = normalize_label(gv, item=i, field="golds")
            n_unparsed += include_gold_ties or gold != "tie"
            pv = "B" if gold == "A" else "A"  # stands in as a wrong verdict, so `accuracy` scores it
        filled.append(pv)
    base = accuracy(filled, g, include_gold_ties=include_gold_ties)
    return replace(base, name="strict_accuracy", extra={**base.extra, "n_unparsed": n_unparsed})


def share(values: Sequence[object], target: object) -> MetricResult:
    """Share of non-missing values equal to ``target`` (e.g. the share of "A" verdicts).

    Comparison is plain equality (no label normalisation). Undefined when every value is missing.
    """
    vals = list(values)
    present = [v for v in vals if not is_missing(v)]
    hits = sum(v == target for v in present)
    name = f"share_{target}"
    if not present:
        return undefined_result(name, 0, len(vals), "no non-missing values", n_target=0)
    return MetricResult(
        name, hits / len(present), len(present), len(vals) - len(present), extra={"n_target": hits}
    )


def position_consistency(verdicts_ab: Sequence[object], verdicts_ba_mapped: Sequence[object]) -> MetricResult:
    """Share of items whose verdict survives swapping the order of the two responses.

    Shapes: two equal-length label sequences; ``verdicts_ba_mapped`` is the swapped-order verdict already
    mapped back to the original naming (its "A" means the original A). An item is consistent when both
    verdicts are equal (tie == tie counts). ``extra`` splits the inconsistent items into ``n_flipped``
    (A vs B: the verdict followed the position) and ``n_tie_mismatch`` (a tie on one side only).
    Items with a missing verdict in either order are excluded and counted.
    """
    ab, ba = check_aligned([verdicts_ab, verdicts_ba_mapped], ["verdicts_ab", "verdicts_ba_mapped"])
    n_excluded = n_consistent = n_flipped = n = 0
    for i, (x, y) in enumerate(zip(ab, ba, strict=True)):
        if is_missing(x) or is_missing(y):
            n_excluded += 1
            continue
        lx = normalize_label(x, item=i, field="verdicts_ab")
        ly = normalize_label(y, item=i, field="verdicts_ba_mapped")
        n += 1
        n_consistent += lx == ly
        n_flipped += {lx, ly} == {"A", "B"}
    extra = {
        "n_consistent": n_consistent,
        "n_flipped": n_flipped,
        "n_tie_mismatch": n - n_consistent - n_flipped,
    }
    if n == 0:
        return undefined_result(
            "position_consistency", 0, n_excluded, "no item parsed in both orders", **extra
        )
    return MetricResult("position_consistency", n_consistent / n, n, n_excluded, extra=extra)


def concordance(pred_i: float | None, pred_j: float | None, gold_i: float, gold_j: float) -> int | None:
    """Per-pair agreement sign: +1 concordant, -1 discordant, 0 when either side is tied.

    A scalar helper for optimizer metrics (sum over pairs ~ Kendall's S), hence an int rather than a
    `MetricResult`. Returns ``None`` when any of the four values is missing, so the caller decides
    how to treat unparsed outputs instead of silently scoring them as a tie.
    """
    if any(is_missing(v) for v in (pred_i, pred_j, gold_i, gold_j)):
        return None
    sign_p = (pred_i > pred_j) - (pred_i < pred_j)  # type: ignore[operator]
    sign_g = (gold_i > gold_j) - (gold_i < gold_j)
    return int(sign_p * sign_g)
