"""Meta-metrics: how well a judge agrees with gold labels, with itself, or with another judge.

Judge-vs-gold and judge-vs-itself metrics live here; inter-rater agreement (Krippendorff's alpha,
Fleiss' kappa) in `agreement.py`; bootstrap CIs, paired differences and McNemar in `significance.py`.
Conventions shared by all three:

* Inputs are plain sequences (lists, tuples, 1-D numpy arrays) aligned by item.
* A judge output that could not be parsed arrives as ``None`` or NaN. Such items are EXCLUDED from the
  value and COUNTED in ``n_excluded``; they are never scored as right or wrong. A missing gold is
  treated the same way.
* Every function returns a frozen `MetricResult` (except the per-pair scalar `concordance`). When
  the value is undefined (no items, constant input, ...) it is NaN and ``reason`` says why, so
  tables can print "n/a (constant input)" instead of an unexplained number. `to_dict()` turns NaN
  into ``None`` so summaries stay valid JSON.

Pairwise verdicts are the labels ``"A"``, ``"B"`` and ``"tie"`` (case-insensitive on input).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
from scipy import stats

from cejudge_dspy.errors import InputError

PAIRWISE_LABELS: tuple[str, ...] = ("A", "B", "tie")
_LABEL_MAP = {"A": "A", "B": "B", "TIE": "tie"}


class _ReadOnlyDict(dict):  # type: ignore[type-arg]
    """A dict that refuses mutation, so a frozen result stays frozen. Still a real dict, so JSON,
    `dataclasses.asdict`, pickling (for process pools) and equality treat it as one."""

    def _refuse(self, *args: object, **kwargs: object) -> None:
        raise TypeError("MetricResult.extra is read-only; build a new result with dataclasses.replace")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type, tuple[dict[str, Any]]]:
        return type(self), (dict(self),)

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items())))


@dataclass(frozen=True)
class MetricResult:
    """One meta-metric value with its sample size and, optionally, a CI and a p-value.

    ``n`` is the number of items (units for agreement metrics) that entered the value; ``n_excluded``
    the number dropped for missing values. ``extra`` holds metric-specific counts (``n_pred_ties``,
    ``b``/``c`` for McNemar, ...); it is read-only.
    """

    name: str
    value: float
    n: int
    n_excluded: int = 0
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None
    reason: str | None = None
    extra: Mapping[str, int | float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # A frozen dataclass can still hand out a mutable dict; freeze it too.
        object.__setattr__(self, "extra", _ReadOnlyDict(self.extra))

    @property
    def defined(self) -> bool:
        """False when the value is NaN (see ``reason``)."""
        return not math.isnan(self.value)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; NaN floats become ``None`` (JSON has no NaN)."""
        return {k: _json_safe(v) for k, v in asdict(self).items()}


def _json_safe(v: Any) -> Any:
    if isinstance(v, dict):  # also turns the read-only extra into a plain dict
        return {k: _json_safe(x) for k, x in v.items()}
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def is_missing(value: object) -> bool:
    """True for ``None`` and float NaN (python or numpy), the two spellings of "unparsed"."""
    return value is None or (isinstance(value, (float, np.floating)) and math.isnan(value))


def normalize_label(value: object, *, item: int | None = None, field: str = "label") -> str:
    """Map a pairwise verdict to ``"A"``, ``"B"`` or ``"tie"``; anything else is an `InputError`."""
    label = _LABEL_MAP.get(str(value).strip().upper()) if isinstance(value, str) else None
    if label is None:
        raise InputError(f"{value!r} is not a pairwise label (A, B or tie)", item=_item(item), field=field)
    return label


def _item(i: int | None) -> str | None:
    return None if i is None else str(i)


def check_aligned(arrays: Sequence[Sequence[Any]], names: Sequence[str]) -> list[list[Any]]:
    """Materialise item-aligned inputs as lists; unequal lengths are an `InputError`."""
    lists = [list(a) for a in arrays]
    if len({len(a) for a in lists}) > 1:
        sizes = ", ".join(f"{n}={len(a)}" for n, a in zip(names, lists, strict=True))
        raise InputError(f"inputs must have the same length ({sizes})", field=names[1])
    return lists


def undefined_result(name: str, n: int, n_excluded: int, reason: str, **extra: int | float) -> MetricResult:
    """A NaN result that says why it is undefined."""
    return MetricResult(name, math.nan, n, n_excluded, reason=reason, extra=extra)


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
    return _correlation("kendall_tau", stats.kendalltau, x, y)


def spearman(x: Sequence[object], y: Sequence[object]) -> MetricResult:
    """Spearman rho via `scipy.stats.spearmanr`; same shapes and edge cases as `kendall_tau`."""
    return _correlation("spearman", stats.spearmanr, x, y)


def pearson(x: Sequence[object], y: Sequence[object]) -> MetricResult:
    """Pearson r via `scipy.stats.pearsonr`; same shapes and edge cases as `kendall_tau`."""
    return _correlation("pearson", stats.pearsonr, x, y)


# The correlations with humans by the names tasks and the CLI use (`metric = "spearman"`).
CORRELATIONS: dict[str, Callable[..., MetricResult]] = {
    "spearman": spearman,
    "kendall": kendall_tau,
    "pearson": pearson,
}


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
