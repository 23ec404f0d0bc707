"""Optimizer metrics: per-item scores with textual feedback for GEPA, plain floats for the others.

Pairwise (`pairwise_feedback`/`pairwise_metric`): the judge runs both presentation orders, and a
verdict that follows the position rather than the content is half wrong, so each order counts:
1.0 when every order picks the human's choice, 0.5 when one of two does, 0.0 when none does.
Gold ties score a constant 0.5 whatever the judge says: a judge that must answer A or B per order
cannot express a tie, and rewarding the order-dependent "tie" that `reconcile` reports would teach
position bias. They carry no signal, so `tuning.split_items` drops them from train and dev.

Pointwise (`pointwise_feedback`/`pointwise_metric`): the task is measured by a rank correlation, so
with `anchors` (the training items as the starting program scored them; `tuning.optimize` passes them)
the score is RANK_WEIGHT x the share of anchors the item is ordered right against (ranking.py) +
(1 - RANK_WEIGHT) x closeness, 1 - |score - gold| / (hi - lo) on the task scale lo..hi; without anchors,
closeness alone. A gold on another scale (e.g. 0-100 DA) is mapped linearly from `label_range`, the
min and max of the training labels (see `label_range_for`), and clipped to the scale.

With token probabilities (the default decision rule, where the backbone gives them) the metrics use
them: a pairwise item scores the judge's probability for the human's choice, p(A) or 1 - p(A) averaged
over both orders (`probabilities.debiased_preference`), instead of the share of orders that picked it,
so a confident right answer earns more than a coin flip that landed right; a pointwise score is the
expected score over the scale's levels, so closeness and `pairwise_concordance` rank items by it rather
than by a few distinct argmax levels. A result decided by the argmax (no probabilities, or
`decision="argmax"`) scores as above.

An unparsed output scores 0 with format feedback naming the stage and the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import dspy

from cejudge_dspy.errors import DataError, InputError
from cejudge_dspy.results import JudgeResult
from cejudge_dspy.tasks import TaskSpec, load_task
from cejudge_dspy.tuning.ranking import RANK_WEIGHT, Anchor, against_anchors, describe

Metric = Callable[..., Any]
_CLIP = 300  # characters of any quoted text in feedback: enough to reflect on, small enough for a prompt


def _clip(text: Any) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= _CLIP else s[: _CLIP - 3] + "..."


def result_of(pred: Any) -> JudgeResult | None:
    """The JudgeResult behind a prediction (None for a program that raised, e.g. GEPA's FailedPrediction)."""
    if isinstance(pred, JudgeResult):
        return pred
    result = getattr(pred, "result", None)
    return result if isinstance(result, JudgeResult) else None


def _format_failure(result: JudgeResult | None) -> dspy.Prediction:
    if result is None:
        why = "the program produced no judgment (it raised before returning a result)"
    else:
        why = f"stage {result.error_stage} could not be parsed: {_clip(result.error)}"
    return dspy.Prediction(
        score=0.0,
        feedback=(
            f"FORMAT FAILURE: {why}. Score 0. Every output field must be present and follow the "
            "required format exactly (verdict exactly A or B, score an integer level of the scale, "
            "lists as JSON lists)."
        ),
    )


def _stage_detail(result: JudgeResult, pred_name: str | None) -> list[str]:
    """What the stage under reflection produced, so its instruction can be judged by its effect."""
    stage = (pred_name or "").split(".")[0]
    lines: list[str] = []
    if stage in ("checklist_r2i", "checklist_i2r"):
        for who, items in result.checklists.items():
            lines.append(f"Checklist for {who} ({len(items)} items): " + _clip(" | ".join(items)))
    elif stage == "concepts":
        lines += [f"Concepts of {who}: {_clip(', '.join(c))}" for who, c in result.concepts.items()]
    elif stage == "translate" and result.translations:
        lines += [f"English translation of {who}: {_clip(t)}" for who, t in result.translations.items()]
    return lines


def pairwise_feedback(
    gold: Any, pred: Any, trace: Any = None, pred_name: str | None = None, pred_trace: Any = None
) -> dspy.Prediction:
    """Per-item pairwise score (see the module docstring) with feedback for GEPA's reflection."""
    label = str(getattr(gold, "label", "")).strip()
    gold_label = {"a": "A", "b": "B", "tie": "tie"}.get(label.lower())
    if gold_label is None:
        raise InputError(
            f"gold label {label!r} is not A, B or tie", item=getattr(gold, "id", None), field="label"
        )
    result = result_of(pred)
    if gold_label == "tie":
        return dspy.Prediction(
            score=0.5,
            feedback="The human judged both responses equally good; "
            "this item is neutral (score 0.5 whatever the verdict).",
        )
    if result is None or not result.ok:
        return _format_failure(result)
    if (p_gold := _p_gold(result, gold_label)) is not None:
        return _probability_feedback(result, gold_label, p_gold, pred_name)
    lines = [f"The human preferred response {gold_label}."]
    right = 0
    for o in result.orders:
        first = "A" if o.order == "AB" else "B"
        ok = o.verdict == gold_label
        right += ok
        lines.append(
            f"Order {o.order} (response {first} shown first): the judge answered {o.shown_verdict}, "
            f"meaning response {o.verdict} - {'correct' if ok else 'wrong'}."
        )
    score = right / len(result.orders) if result.orders else float(result.verdict == gold_label)
    if len(result.orders) == 2 and right == 1:
        lines.append(
            "Score 0.5: the verdict changed with the presentation order; the judge followed the "
            "position, not the content. The better response must win in both orders."
        )
    else:
        lines.append(f"Score {score:g}.")
    if result.feedback:
        lines.append(f"Judge's reasoning (first order): {_clip(result.feedback)}")
    if result.answers:
        lines.append("Checklist items the judge answered: " + _clip(" | ".join(result.answers)))
    lines += _stage_detail(result, pred_name)
    return dspy.Prediction(score=score, feedback="\n".join(lines))


def _p_gold(result: JudgeResult, gold_label: str) -> float | None:
    """The judge's probability for the human's choice, where its probabilities decided the verdict."""
    probs = result.probabilities
    if result.decision != "probability" or probs is None or not probs.ok or probs.p_a is None:
        return None
    return probs.p_a if gold_label == "A" else 1.0 - probs.p_a


def _probability_feedback(
    result: JudgeResult, gold_label: str, p_gold: float, pred_name: str | None
) -> dspy.Prediction:
    lines = [f"The human preferred response {gold_label}."]
    for o in result.orders:
        first = "A" if o.order == "AB" else "B"
        p_said = "" if o.p_first is None else f", P(shown first is better) {o.p_first:.2f}"
        lines.append(
            f"Order {o.order} (response {first} shown first): the judge answered {o.shown_verdict}{p_said}."
        )
    lines.append(
        f"Score {p_gold:.2f}: the judge's probability that response {gold_label} is better, averaged over "
        "the presentation orders; the better response must get a high probability in both orders."
    )
    if result.feedback:
        lines.append(f"Judge's reasoning (first order): {_clip(result.feedback)}")
    if result.answers:
        lines.append("Checklist items the judge answered: " + _clip(" | ".join(result.answers)))
    lines += _stage_detail(result, pred_name)
    return dspy.Prediction(score=p_gold, feedback="\n".join(lines))


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
    if result.feedback:
        lines.append(f"Judge's reasoning: {_clip(result.feedback)}")
    if result.answers:
        lines.append("Checklist items the judge answered: " + _clip(" | ".join(result.answers)))
    lines += _stage_detail(result, pred_name)
    return dspy.Prediction(score=score, feedback="\n".join(lines))


def pairwise_metric(
    gold: Any, pred: Any, trace: Any = None, pred_name: str | None = None, pred_trace: Any = None
) -> float:
    """`pairwise_feedback`'s score as a float (for Evaluate, MIPROv2 and SIMBA)."""
    return float(pairwise_feedback(gold, pred, trace, pred_name, pred_trace).score)


def pointwise_metric(
    gold: Any,
    pred: Any,
    trace: Any = None,
    pred_name: str | None = None,
    pred_trace: Any = None,
    *,
    scale: tuple[float, float] | None = None,
    label_range: tuple[float, float] | None = None,
    anchors: Sequence[Anchor] = (),
) -> float:
    """`pointwise_feedback`'s score as a float."""
    return float(
        pointwise_feedback(
            gold, pred, trace, pred_name, pred_trace, scale=scale, label_range=label_range, anchors=anchors
        ).score
    )


def metric_for(
    task: str | TaskSpec,
    trainset: Sequence[Any] = (),
    *,
    feedback: bool = False,
    anchors: Sequence[Anchor] = (),
) -> Metric:
    """The task's metric with its scale, training label range and (pointwise) ranking anchors bound,
    GEPA-shaped when `feedback`."""
    spec = load_task(task)
    if spec.mode == "pairwise":
        return pairwise_feedback if feedback else pairwise_metric
    scale = tuple(float(v) for v in spec.scale_range)
    label_range = label_range_for(scale, [getattr(ex, "label", None) for ex in trainset])  # type: ignore[arg-type]
    fn = pointwise_feedback if feedback else pointwise_metric

    # A def, not functools.partial: optimizers print and introspect the metric's __name__.
    def metric(
        gold: Any, pred: Any, trace: Any = None, pred_name: str | None = None, pred_trace: Any = None
    ) -> Any:
        return fn(
            gold, pred, trace, pred_name, pred_trace, scale=scale, label_range=label_range, anchors=anchors
        )

    metric.__name__ = fn.__name__
    metric.label_range = label_range  # type: ignore[attr-defined]
    metric.anchors = tuple(anchors)  # type: ignore[attr-defined]
    return metric


def pairwise_concordance(examples: Sequence[Any], preds: Sequence[Any]) -> float:
    """Corpus-level agreement of pointwise scores with gold: (concordant - discordant) / comparable pairs.

    Tau-a style over all item pairs whose gold differs; a pair with an unparsed side is left out, a
    tied judge pair counts 0 (so ties cost). NaN when no pair is comparable.
    """
    from cejudge_dspy.evaluation.metrics import concordance

    if len(examples) != len(preds):
        raise InputError(f"{len(examples)} examples but {len(preds)} predictions", field="preds")
    golds = [float(ex.label) for ex in examples]
    scores = [r.score if (r := result_of(p)) is not None and r.ok else None for p in preds]
    total = n = 0
    for i in range(len(golds)):
        for j in range(i + 1, len(golds)):
            if golds[i] == golds[j]:
                continue
            c = concordance(scores[i], scores[j], golds[i], golds[j])
            if c is not None:
                total += c
                n += 1
    return total / n if n else math.nan
