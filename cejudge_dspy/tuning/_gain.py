"""Did tuning help? The task's own metric on the held-out dev split, before against after, with a CI.

A tuned program may replace the hand-written one only when this says so: the paired bootstrap interval
of (after - before) on the task's meta-metric lies above zero. Pairwise tasks use accuracy with an
unparsed verdict counted as wrong (a tuned program that stops parsing must not look better by leaving
items out); pointwise tasks use the declared correlation (Kendall tau-b for `literary`) on the items
both programs scored, and a tuned program that leaves more items unparsed is never a gain.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cejudge_dspy.metrics import CORRELATIONS, accuracy, paired_bootstrap_diff
from cejudge_dspy.tasks import TaskSpec

CONFIDENCE = 0.95


def task_metric(spec: TaskSpec) -> Any:
    return accuracy if spec.mode == "pairwise" else CORRELATIONS[spec.metric]


def strict(predictions: Sequence[Any], golds: Sequence[Any], spec: TaskSpec) -> list[Any]:
    """Pairwise: a missing verdict becomes a wrong one (the side the gold label did not pick); pointwise
    scores stay as they are (a missing score is excluded, and guarded by the unparsed count instead)."""
    if spec.mode != "pairwise":
        return list(predictions)
    return [
        ("B" if str(g).upper() == "A" else "A") if p is None else p
        for p, g in zip(predictions, golds, strict=True)
    ]


def held_out_gain(
    spec: TaskSpec,
    golds: Sequence[Any],
    before: Sequence[Any],
    after: Sequence[Any],
    *,
    n_resamples: int = 1000,
    seed: int = 42,
) -> dict[str, Any]:
    """The dev-split comparison a tuned program must win: metric before and after, their paired
    bootstrap difference with its CI, and `significant` (the CI's lower end above 0) with the reason."""
    fn = task_metric(spec)
    b, a = strict(before, golds, spec), strict(after, golds, spec)
    score_b, score_a = fn(b, list(golds)), fn(a, list(golds))
    diff = paired_bootstrap_diff(
        fn, a, b, list(golds), n_resamples=n_resamples, confidence=CONFIDENCE, seed=seed
    )
    unparsed_b, unparsed_a = sum(p is None for p in before), sum(p is None for p in after)
    out: dict[str, Any] = {
        "metric": fn.__name__ if spec.mode != "pairwise" else "accuracy (unparsed counted wrong)",
        "before": _num(score_b.value),
        "after": _num(score_a.value),
        "diff": _num(diff.value),
        "ci": [diff.ci_low, diff.ci_high],
        "confidence": CONFIDENCE,
        "n": diff.n,
        "unparsed": {"before": unparsed_b, "after": unparsed_a},
    }
    if not diff.defined or diff.ci_low is None:
        reason = f"the difference is undefined ({diff.reason or 'too few items'})"
    elif unparsed_a > unparsed_b:
        reason = f"the tuned program left more items unparsed ({unparsed_a} against {unparsed_b})"
    elif diff.ci_low <= 0:
        reason = (
            f"no gain beyond noise: {out['metric']} {_f(score_b.value)} -> {_f(score_a.value)}, "
            f"difference {_f(diff.value)} with {CONFIDENCE:.0%} CI [{_f(diff.ci_low)}, {_f(diff.ci_high)}] "
            f"over {diff.n} dev items"
        )
    else:
        reason = None
    out["significant"] = reason is None
    out["reason"] = reason or (
        f"{out['metric']} {_f(score_b.value)} -> {_f(score_a.value)}, difference {_f(diff.value)} with "
        f"{CONFIDENCE:.0%} CI [{_f(diff.ci_low)}, {_f(diff.ci_high)}] over {diff.n} dev items"
    )
    return out


def _num(value: float) -> float | None:
    return None if value != value else value  # NaN (undefined) is stored as null in JSON manifests


def _f(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}" if value < 0 else f"{value:.3f}"
