"""Optimizer metrics: per-item scores with textual feedback for GEPA, plain floats for the others.

The per-item scores live with their mode: _pairwise_scoring.py (both presentation orders count, gold
ties are neutral) and _pointwise_scoring.py (ranking against the training anchors plus closeness on the
task scale), with what both quote back to GEPA in _feedback.py. This module turns them into the metric an
optimizer calls: a float for Evaluate, MIPROv2 and SIMBA, and `metric_for`, which binds the task scale,
the training label range and the ranking anchors. It also has `pairwise_concordance`, the corpus-level
agreement the pointwise dev score reports. Every name stays importable from here.

With token probabilities (the default decision rule, where the backbone gives them) the metrics use
them: a pairwise item scores the judge's probability for the human's choice, p(A) or 1 - p(A) averaged
over both orders (`verdicts.debiased_preference`), instead of the share of orders that picked it,
so a confident right answer earns more than a coin flip that landed right; a pointwise score is the
expected score over the scale's levels, so closeness and `pairwise_concordance` rank items by it rather
than by a few distinct argmax levels. A result decided by the argmax (no probabilities, or
`decision="argmax"`) scores as in the two modes' modules.

An unparsed output scores 0 with format feedback naming the stage and the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from cejudge_dspy.errors import InputError
from cejudge_dspy.tasks import TaskSpec, load_task
from cejudge_dspy.tuning._feedback import result_of
from cejudge_dspy.tuning._pairwise_scoring import pairwise_feedback
from cejudge_dspy.tuning._pointwise_scoring import label_range_for, pointwise_feedback
from cejudge_dspy.tuning._ranking import Anchor

Metric = Callable[..., Any]


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
    from cejudge_dspy.metrics import concordance

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
