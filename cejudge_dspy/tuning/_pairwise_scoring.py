"""The pairwise tuning metric: a per-item score with textual feedback for GEPA's reflection.

The judge runs both presentation orders, and a verdict that follows the position rather than the
content is half wrong, so each order counts: 1.0 when every order picks the human's choice, 0.5 when one
of two does, 0.0 when none does. Gold ties score a constant 0.5 whatever the judge says: a judge that
must answer A or B per order cannot express a tie, and rewarding the order-dependent "tie" that
`reconcile` reports would teach position bias. They carry no signal, so `tuning.split_items` drops them
from train and dev.

With token probabilities (the default decision rule, where the backbone gives them) an item scores the
judge's probability for the human's choice, p(A) or 1 - p(A) averaged over both orders
(`verdicts.debiased_preference`), instead of the share of orders that picked it, so a confident
right answer earns more than a coin flip that landed right. A result decided by the argmax (no
probabilities, or `decision="argmax"`) scores by the orders as above.
"""

from __future__ import annotations

from typing import Any

import dspy

from cejudge_dspy.errors import InputError
from cejudge_dspy.judges.verdicts import JudgeResult
from cejudge_dspy.tuning._feedback import _format_failure, _judge_said, result_of


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
    lines += _judge_said(result, pred_name, "Judge's reasoning (first order)")
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
    lines += _judge_said(result, pred_name, "Judge's reasoning (first order)")
    return dspy.Prediction(score=p_gold, feedback="\n".join(lines))
