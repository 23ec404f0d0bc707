"""The pointwise tuning metric: a per-item score with textual feedback for GEPA's reflection.

The task is measured by a rank correlation, so with `anchors` (the training items as the starting
program scored them; `tuning.optimize` passes them) the score is RANK_WEIGHT x the share of anchors the
item is ordered right against (_ranking.py) + (1 - RANK_WEIGHT) x closeness, 1 - |score - gold| / (hi - lo)
on the task scale lo..hi; without anchors, closeness alone. A gold on another scale (e.g. 0-100 DA) is
mapped linearly from `label_range`, the min and max of the training labels (see `label_range_for`), and
clipped to the scale.

With token probabilities (the default decision rule, where the backbone gives them) the judge's score is
the expected score over the scale's levels, so closeness ranks items by it rather than by a few distinct
argmax levels; a result decided by the argmax scores its own answer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import dspy

from cejudge_dspy.errors import DataError, InputError
from cejudge_dspy.tuning._feedback import _format_failure, _judge_said, result_of
from cejudge_dspy.tuning._ranking import RANK_WEIGHT, Anchor, against_anchors, describe


def rescale(value: float, label_range: tuple[float, float] | None, scale: tuple[float, float]) -> float:
    """Map a gold value from `label_range` onto `scale` (identity when None), clipped to the scale."""
    lo, hi = scale
    if label_range is not None:
        g_lo, g_hi = label_range
        value = lo + (value - g_lo) * (hi - lo) / (g_hi - g_lo)
    return min(max(value, lo), hi)


def label_range_for(scale: tuple[float, float], labels: Sequence[Any]) -> tuple[float, float] | None:
    """None when every training label already lies on the task scale; else their (min, max).

    Rescaling labels that already fit would stretch e.g. 2..6 onto 1..7 and distort them, so the
    training range is used only for data on another scale.
    """
    values = [float(v) for v in labels if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not values or all(scale[0] <= v <= scale[1] for v in values):
        return None
    lo, hi = min(values), max(values)
    if lo == hi:
        raise DataError(
            f"all training labels are {lo:g}, outside the task scale {scale[0]:g}-{scale[1]:g}, "
            "so they cannot be rescaled; check the label column (--field label=COLUMN)"
        )
    return lo, hi


def pointwise_feedback(
    gold: Any,
    pred: Any,
    trace: Any = None,
    pred_name: str | None = None,
    pred_trace: Any = None,
    *,
    scale: tuple[float, float] | None = None,
    label_range: tuple[float, float] | None = None,
    anchors: Sequence[Anchor] = (),
) -> dspy.Prediction:
    """Per-item ranking against `anchors` and closeness to the human score (see the module docstring);
    bind `scale`, `label_range` and `anchors` with `metric_for`."""
    if scale is None:
        raise InputError("pointwise metrics need the task scale; build one with metric_for(task, trainset)")
    result = result_of(pred)
    if result is None or not result.ok or result.score is None:
        return _format_failure(result)
    raw = float(gold.label)
    target = rescale(raw, label_range, scale)
    lo, hi = scale
    diff = float(result.score) - target
    closeness = max(0.0, 1.0 - abs(diff) / (hi - lo))
    ranking = against_anchors(str(gold.get("id")), raw, float(result.score), anchors) if anchors else None
    score = closeness if ranking is None else RANK_WEIGHT * ranking.value + (1 - RANK_WEIGHT) * closeness
    human = f"The human score is {raw:g}"
    if label_range is not None:
        human += f" on the data's {label_range[0]:g}-{label_range[1]:g} range, i.e. {target:.1f}"
    kept = result.argmax.score if result.argmax is not None else None
    gave = f"{float(result.score):.2f}" if isinstance(result.score, float) else str(result.score)
    if result.decision == "probability" and kept is not None:
        gave += f" (expected over its token probabilities; its own answer was {kept})"
    lines = [
        f"{human} on the task's {lo:g}-{hi:g} scale.",
        f"The judge gave {gave}: "
        + (
            "exactly right."
            if abs(diff) < 1e-9
            else f"too {'high' if diff > 0 else 'low'} by {abs(diff):.1f}."
        ),
        f"Closeness {closeness:.2f} = 1 - |{float(result.score):.2f} - {target:.1f}| / {hi - lo:g}.",
    ]
    if ranking is not None:
        lines.append(describe(ranking))
        lines.append(
            f"Score {score:.2f} = {RANK_WEIGHT:g} x ranking {ranking.value:.2f} + {1 - RANK_WEIGHT:g} x "
            f"closeness {closeness:.2f}: the task is measured by how the judge orders items."
        )
    lines += _judge_said(result, pred_name)
    return dspy.Prediction(score=score, feedback="\n".join(lines))
